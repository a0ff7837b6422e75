//! The shared machinery every lock kind runs on, written once over the seam in
//! [`crate::kind`]:
//! the wait loop and attempts (this file), the release path ([`release`]), the guard core
//! ([`guard`]) and the user-facing operations every lock handle offers ([`handle`]).

mod extend;
mod give_up;
pub(crate) mod guard;
pub(crate) mod handle;
pub(crate) mod release;

use std::sync::Arc;
use std::time::{Duration, Instant};

use redis::Value;

use crate::config::millis;
use crate::deadline::after;
use crate::error::{Error, Result};
use crate::holds::{Expiry, LateWhy, NewHold, Recorded, Turn};
use crate::inner::ClientInner;
use crate::owner::{self, OwnerId, OwnerSel};
use crate::replica_sync::Synced;
use crate::settle::Unsettled;
use crate::{name, script};

use crate::kind::{AcquireArgs, AcquireKind, Ctx, Reply, Wake};
use crate::waiting::{Between, Seen, Step, Wait};
use give_up::GiveUp;
pub use guard::Guard;
pub use guard::Unlocked;
use release::Releaser;

/// A handle to one distributed lock of kind `K`, wire-compatible with Redisson's lock of that
/// kind. Every kind is used through it: [`RLock`](crate::RLock) is `Lock<kinds::Reentrant>`, and
/// so are [`RFairLock`](crate::RFairLock), [`RFencedLock`](crate::RFencedLock),
/// [`RSpinLock`](crate::RSpinLock), [`RNonReentrantLock`](crate::RNonReentrantLock),
/// [`RNonReentrantFairLock`](crate::RNonReentrantFairLock) and the two sides of an
/// [`RReadWriteLock`](crate::RReadWriteLock), [`RReadLock`](crate::RReadLock) and
/// [`RWriteLock`](crate::RWriteLock). What a kind keeps in Redis, how its waiters wait and what it
/// adds (a fencing token, a back-off, a downgrade) is on its type in [`kinds`](crate::kinds);
/// everything else is the same for every kind and documented here once.
///
/// The handle is cheap to clone and sends nothing until it is used. It names a lock and an owner
/// choice ([`OwnerId`]): by default **every acquisition has a fresh owner**, so two acquisitions
/// exclude each other even in one task, as with `tokio::sync::Mutex`;
/// [`Guard::reenter`] takes another hold of the same owner, and
/// [`with_owner`](Self::with_owner) or [`OwnerId::scope`] pin one.
///
/// Redis-based locks are a performance and coordination layer: an asynchronously replicated
/// Redis can lose a lock on failover, and a paused holder can outlive its lease. Protect the
/// resource itself ([`RFencedLock`](crate::RFencedLock) tokens, conditional updates) where
/// correctness matters.
///
/// # Examples
///
/// ```no_run
/// # async fn demo(client: redisson_lock::Client) -> redisson_lock::Result<()> {
/// use std::time::Duration;
/// let lock = client.lock("lock:order:42")?; // an RLock = Lock<kinds::Reentrant>
/// if let Some(guard) = lock.try_lock_for(Duration::from_secs(2)).await? {
///     // held; the watchdog keeps it alive until unlock
///     guard.unlock().await?;
/// }
/// # Ok(()) }
/// ```
pub struct Lock<K: AcquireKind> {
    pub(crate) client: Arc<ClientInner>,
    pub(crate) key: Arc<str>,
    pub(crate) kind: &'static K,
    pub(crate) owner: OwnerSel,
    pub(crate) wake: Wake,
    /// What follows the owner's field in this handle's hold identity (see
    /// [`field_of`](Self::field_of)): `None` for every kind whose holds are one hash field, the
    /// value set for the grouped lock (`kinds::Group`), whose one key holds many sub-locks.
    pub(crate) tail: Option<Arc<str>>,
}

impl<K: AcquireKind> Clone for Lock<K> {
    fn clone(&self) -> Self {
        Lock {
            client: self.client.clone(),
            key: self.key.clone(),
            kind: self.kind,
            owner: self.owner,
            wake: self.wake,
            tail: self.tail.clone(),
        }
    }
}

/// What the wait loop saw, for metrics.
#[derive(Default)]
struct LoopStats {
    /// Acquire scripts sent.
    attempts: u32,
    /// The grant came on the first attempt after an unlock message woke the waiter.
    handoff: bool,
}

enum Attempt<K: AcquireKind> {
    Granted(Guard<K>),
    /// Held by someone else; the lock's PTTL in ms (-1: no TTL).
    Refused(i64),
    /// Granted, but nobody can use the hold (see [`LateWhy`]): it is being released.
    TooLate(LateWhy),
}

impl<K: AcquireKind> Lock<K> {
    pub(crate) fn new(client: Arc<ClientInner>, key: String, kind: &'static K) -> Self {
        Lock {
            client,
            key: key.into(),
            kind,
            owner: OwnerSel::Auto,
            wake: kind.wake(),
            tail: None,
        }
    }

    /// A plain read command on this lock, with the command timeout.
    pub(crate) async fn query<T: redis::FromRedisValue>(&self, cmd: &redis::Cmd) -> Result<T> {
        script::read(
            &self.client.conn,
            self.client.config.command_timeout,
            &self.key,
            cmd,
        )
        .await
    }

    /// The identity of `owner`'s holds on this handle's lock: the owner's hash field
    /// `<client id>:<owner id><kind suffix>`, plus the handle's tail when it has one. The hold
    /// table, the watchdog, releases and settling know a hold by (key, this string), and the
    /// kind reads from it what its scripts need, so a kind with per-handle state in Redis (the
    /// grouped lock's value set) needs no state of its own.
    pub(crate) fn field_of(&self, owner: OwnerId) -> Arc<str> {
        match &self.tail {
            None => owner::field(&self.client.id, owner, self.kind.field_suffix()),
            Some(tail) => {
                let mut suffix = String::with_capacity(self.kind.field_suffix().len() + tail.len());
                suffix.push_str(self.kind.field_suffix());
                suffix.push_str(tail);
                owner::field(&self.client.id, owner, &suffix)
            }
        }
    }

    /// The unlock channel `owner` listens on (a field is built only for kinds with one
    /// channel per owner).
    fn channel_of(&self, owner: OwnerId) -> String {
        if self.kind.channel_per_owner() {
            self.kind.channel(&self.key, &self.field_of(owner))
        } else {
            self.kind.channel(&self.key, "")
        }
    }

    /// The owner of handle-level operations, or an error explaining how to get one.
    pub(crate) fn fixed_owner(&self) -> Result<OwnerId> {
        self.owner.fixed().ok_or_else(|| Error::NoOwner {
            key: self.key.to_string(),
        })
    }

    /// The wait loop shared by every kind. `wait`: `None` waits forever, `Some(ZERO)` tries once.
    /// `lease`: `None` = watchdog mode.
    pub(crate) async fn acquire(
        &self,
        wait: Option<Duration>,
        lease: Option<Duration>,
    ) -> Result<Option<Guard<K>>> {
        let cfg = &self.client.config;
        let own_ms = match lease {
            Some(l) => millis("lease", l)?,
            None => cfg.watchdog_ms(),
        };
        if self.client.holds.is_closed() {
            return Err(Error::Shutdown);
        }
        let start = Instant::now();
        let plan = Plan {
            lease,
            own_ms,
            deadline: wait.map(|w| after(start, w)),
            wait_ms: self.kind.queue().map_or(0, |q| q.wait_budget(wait, cfg)),
            waits: wait != Some(Duration::ZERO),
            // without a fixed owner every owner below is made for this acquisition: its field
            // in the lock is the grant's record (no latch to write, nor to delete afterwards)
            by_field: self.owner.fixed().is_none() && self.kind.field_records_grant(),
        };
        // a kind whose waiters leave traces (the fair queue) gives up when the wait ends without
        // the lock: at once on timeout or error, in the background when the caller is cancelled
        let stable = self.kind.queue().is_some().then(|| self.owner.for_acquire());
        let mut give_up = stable.and_then(|owner| GiveUp::arm(self, owner, &plan));
        let labels = self.labels();
        let mut stats = LoopStats::default();
        let result = {
            let _waiting = crate::metrics::Waiting::new(&labels);
            // `field`: the owner field of the attempt in flight (the holder's, once granted)
            let span = tracing::debug_span!("acquire", key = %self.key, kind = self.kind.label(), field = tracing::field::Empty);
            tracing::Instrument::instrument(self.wait_loop(&plan, stable, wait, &mut stats), span).await
        };
        crate::metrics::acquisition(
            &labels,
            start,
            match &result {
                Ok(Some(_)) => crate::metrics::Outcome::Acquired {
                    attempts: stats.attempts,
                    handoff: stats.handoff,
                },
                Ok(None) => crate::metrics::Outcome::Timeout,
                Err(_) => crate::metrics::Outcome::Error,
            },
        );
        if let Some(g) = give_up.as_mut() {
            if matches!(result, Ok(Some(_))) {
                g.disarm();
            } else {
                // within what the caller was promised (its wait plus one command timeout); the
                // rest, if it takes longer, as background work
                let from = plan.deadline.unwrap_or_else(Instant::now);
                g.now(after(from, cfg.command_timeout)).await;
            }
        }
        result
    }

    /// The labels of this lock's metrics.
    pub(crate) fn labels(&self) -> crate::metrics::Labels {
        crate::metrics::Labels::new(
            self.kind.label(),
            &self.key,
            self.client.config.metrics_lock_names,
        )
    }

    /// The client's one wait loop ([`crate::waiting`]) with this kind's attempts: listening on
    /// the kind's channel (or polling with its back-off), each refusal naming when the holder's
    /// TTL ends.
    async fn wait_loop(
        &self,
        plan: &Plan,
        stable: Option<OwnerId>,
        wait: Option<Duration>,
        stats: &mut LoopStats,
    ) -> Result<Option<Guard<K>>> {
        let once = wait == Some(Duration::ZERO);
        let between = match self.wake {
            Wake::Backoff(b) => Between::Backoff(b.policy()),
            Wake::PubSub => Between::Channel {
                // a kind with a channel per owner keeps one owner throughout (its
                // `stable_owner`); one attempt never listens, so its channel is not built
                channel: match once {
                    true => String::new(),
                    false => self.channel_of(stable.unwrap_or_else(|| self.owner.for_acquire())),
                },
                messages: crate::pubsub::Messages::Unlock,
                // other local waiters keep the channel subscribed: listen before the first
                // attempt, so that a refusal needs no second attempt after subscribing
                join_first: true,
                watch_gone: true,
            },
        };
        let waiting = Wait {
            client: &self.client,
            key: &self.key,
            between,
            deadline: plan.deadline,
            once,
        };
        let mut seen = Seen::default();
        let result = waiting
            .run(&mut seen, |_| async {
                // without a fixed owner, one per attempt: an attempt whose outcome is still
                // being settled in the background never holds up the next one (unless the kind
                // needs one owner throughout: a fair waiter's place in the queue)
                let owner = stable.unwrap_or_else(|| self.owner.for_acquire());
                let span = tracing::Span::current();
                if !span.is_disabled() {
                    span.record("field", &*self.field_of(owner));
                }
                Ok(match self.attempt(owner, *plan).await? {
                    Attempt::Granted(held) => {
                        if self.client.holds.is_closed() {
                            // granted just before the client closed: the close ended the hold
                            // and releases it
                            drop(held);
                            return Err(Error::Shutdown);
                        }
                        tracing::debug!(key = %self.key, field = %held.field(), kind = self.kind.label(), lease_ms = plan.own_ms, watchdog = plan.lease.is_none(), "acquired");
                        Step::Done(held)
                    }
                    Attempt::Refused(t) if t > 0 => Step::Again {
                        at: Some(after(Instant::now(), Duration::from_millis(t as u64))),
                        idle: false,
                    },
                    // refused with nothing to wait for (someone ahead in a queue while the lock
                    // is free: a dead head waiter, or one that left without a word)
                    Attempt::Refused(0) => Step::Again { at: None, idle: true },
                    Attempt::Refused(_) => Step::again(),
                    // granted, but answered after the hold's trusted time (Redis stalled): that
                    // hold is being released; try again like after a failed request
                    Attempt::TooLate(LateWhy::Expired(reason)) => {
                        let lost = Error::Lost {
                            key: self.key.to_string(),
                            field: self.field_of(owner).to_string(),
                            reason,
                        };
                        tracing::warn!(key = %self.key, error = %lost, "granted too late to trust the hold (released)");
                        Step::Failed(lost)
                    }
                    Attempt::TooLate(_) => return Err(Error::Shutdown),
                })
            })
            .await;
        stats.attempts = seen.attempts;
        stats.handoff = seen.after_message;
        result
    }

    fn ctx<'a>(&'a self, channel: &'a str, field: &'a str) -> Ctx<'a> {
        Ctx {
            key: &self.key,
            channel,
            field,
            publish: self.client.publish_cmd,
        }
    }

    /// One attempt, supervised: if the caller's future is dropped while the request may be in
    /// Redis, the attempt is settled in the background through its latch (it is made never to
    /// apply, or found granted and released at once). Nothing is boxed or spawned unless that
    /// happens.
    async fn attempt(&self, owner: OwnerId, plan: Plan) -> Result<Attempt<K>> {
        let Plan {
            lease,
            own_ms,
            deadline,
            ..
        } = plan;
        let cfg = &self.client.config;
        let holds = &self.client.holds;
        let field = self.field_of(owner);
        // the turn is almost always free: take it without building the wait (and its timer)
        // (no turn once the client shuts down: nothing more is sent)
        let turn = match (holds.try_turn_to_acquire(&self.key, &field, self.kind)?, deadline) {
            (Some(t), _) => t,
            (None, None) => holds.turn_to_acquire(&self.key, &field, self.kind).await?,
            (None, Some(d)) => {
                let limit = after(d, cfg.command_timeout);
                let wait = holds.turn_to_acquire(&self.key, &field, self.kind);
                match tokio::time::timeout_at(limit.into(), wait).await {
                    Ok(t) => t?,
                    Err(_) => return Err(Error::CommandTimeout(cfg.command_timeout)),
                }
            }
        };
        let need_ms = if self.kind.ttl_only_grows() {
            own_ms
        } else {
            holds.acquire_need(&turn, own_ms)
        };
        let latch = name::fresh_latch(&self.key);
        let args = AcquireArgs {
            ttl_ms: need_ms,
            latch: &latch,
            latch_ms: if plan.by_field { 0 } else { cfg.settle_window_ms() },
            wait_ms: plan.wait_ms,
            waits: plan.waits,
        };
        // no acquire script takes the channel (see `AcquireKind::acquire`): none is built
        let inv = self.kind.acquire(&self.ctx("", &field), &args);
        let sent_at = Instant::now();
        let expiry = match lease {
            None => Expiry::Watchdog,
            Some(_) => Expiry::Leased {
                lease_ms: own_ms,
                until: after(sent_at, Duration::from_millis(own_ms)),
            },
        };
        // replicas known to lag: a required acquisition fails before anything is sent
        self.client.replica_sync.refuse_now(&self.key)?;
        // from here until its outcome is known, the request may be in Redis
        let flight = AttemptInFlight {
            core: self,
            sent: Some(Sent {
                turn,
                latch,
                by_field: plan.by_field,
                expiry,
                sent_at,
                need_ms,
                owner,
            }),
        };
        let mut synced = Synced::NotAsked;
        let reply = match self
            .client
            .replica_sync
            .run::<Value>(&self.client.conn, cfg.command_timeout, &self.key, &inv)
            .await
        {
            Ok((v, s)) => {
                synced = s;
                self.kind.decode(&v)?
            }
            Err(e) if e.is_ambiguous() => {
                // The request may or may not have run. Never re-send it: ask Redis. Now, if the
                // caller's wait allows one more request and the client is not shutting down;
                // else in the background.
                if holds.is_closed() {
                    return Err(Error::Shutdown); // `flight` settles it in the background
                }
                let settled = if deadline.is_none_or(|d| Instant::now() < d) {
                    Box::pin(self.settle(flight.latch(), plan.by_field.then_some(&*field)))
                        .await
                        .ok() // boxed: rare and large
                } else {
                    None
                };
                match settled {
                    Some(Reply::Granted { count, grant }) => {
                        tracing::debug!(key = %self.key, field = %field, error = %e, "acquire reply was lost, but Redis had granted it: keeping the hold");
                        Reply::Granted { count, grant }
                    }
                    Some(_) => {
                        drop(flight.land());
                        tracing::debug!(key = %self.key, field = %field, error = %e, "acquire reply was lost; it never took effect and now never will");
                        return Err(e);
                    }
                    None => return Err(e), // `flight` settles it in the background
                }
            }
            Err(e) => {
                drop(flight.land()); // the script did not run, or failed: definitive
                return Err(self.kind.map_error(&self.key, &field, e));
            }
        };
        let sent = flight.land();
        match reply {
            Reply::Granted { count, grant } => {
                let held = match self.record_grant(sent, count, grant, false) {
                    Ok((held, latch)) => {
                        if let Some(latch) = latch {
                            self.client.latches.discard(latch);
                        }
                        held
                    }
                    // the client is shutting down, or the reply came too late to trust the hold:
                    // it is being released
                    Err(why) => return Ok(Attempt::TooLate(why)),
                };
                if let Some(wanted) = self.client.replica_sync.unconfirmed(&synced) {
                    // boxed: the release's state would otherwise be part of every attempt's
                    let undo = Box::pin(async move { held.unlock().await.map(drop) });
                    return Err(self
                        .client
                        .replica_sync
                        .undo_unconfirmed(&self.key, wanted, undo)
                        .await);
                }
                Ok(Attempt::Granted(held))
            }
            Reply::Refused { pttl } => Ok(Attempt::Refused(pttl)),
            Reply::Cancelled => Err(Error::Protocol(
                "a new acquire attempt found its id already cancelled".into(),
            )),
        }
    }

    /// Asks Redis whether the acquire whose latch is `latch` took effect, making sure it never
    /// will if it has not. `by_field`: the owner field that records its grant, when its owner was
    /// new to it (else the latch records it). `Reply::Granted`: it did; anything else: not, and
    /// never. Asking again gives the same answer.
    async fn settle(&self, latch: &str, by_field: Option<&str>) -> Result<Reply<K::Grant>> {
        let cfg = &self.client.config;
        // a copy of the request still on its way finds the marker for as long as a grant's
        // record would live
        let inv = match by_field {
            None => {
                let mut inv = script::RESOLVE_ACQUIRE.prepare_invoke();
                inv.key(latch).arg(cfg.settle_window_ms());
                inv
            }
            Some(field) => {
                let mut inv = script::RESOLVE_BY_FIELD.prepare_invoke();
                inv.key(latch)
                    .key(&*self.key)
                    .arg(cfg.settle_window_ms())
                    .arg(field);
                inv
            }
        };
        let v: Value = script::run(&self.client.conn, cfg.command_timeout, &self.key, &inv).await?;
        let reply = self.kind.decode(&v)?;
        // a latch that recorded the grant is garbage now (a grant found in the owner's field
        // wrote none)
        if by_field.is_none() && matches!(reply, Reply::Granted { .. }) {
            self.client.latches.discard(latch.to_owned());
        }
        Ok(reply)
    }

    /// Records a grant of the attempt `sent` in the hold table and gives its turn back: the
    /// guard of that hold, and the attempt's latch if it recorded the grant. `abandoned`: the caller gave up before the
    /// outcome was known. A grant nobody will use (abandoned, the client shutting down, or
    /// answered after the hold's trusted time) is released at once, as background work under
    /// the attempt's turn; `Err` says why.
    fn record_grant(
        &self,
        sent: Sent,
        count: i64,
        grant: K::Grant,
        abandoned: bool,
    ) -> std::result::Result<(Guard<K>, Option<String>), LateWhy> {
        let Sent {
            turn,
            latch,
            by_field,
            expiry,
            sent_at,
            need_ms,
            owner,
        } = sent;
        let field = turn.field().clone();
        let g = NewHold {
            kind: self.kind,
            expiry,
            sent_at,
            need_ms,
            count,
        };
        match self.client.holds.grant_passing(turn, g, abandoned) {
            Recorded::Live(record) => {
                // the loss watch reads the key, so that Redis tells it when the key changes
                self.client.invalidated.key(&self.key);
                let latch = (!by_field).then_some(latch);
                Ok((
                    Guard::new(self.clone(), field, owner, record, expiry, grant),
                    latch,
                ))
            }
            Recorded::Late(late) => {
                if !by_field {
                    self.client.latches.discard(latch);
                }
                let why = late.why;
                let releaser = Releaser::of(self);
                let job: crate::background::Job =
                    Box::new(move || Box::pin(async move { releaser.release_late(late).await }));
                if !self.client.background.push(&self.key, job) {
                    tracing::warn!(key = %self.key, field = %field, "a grant nobody will use was found after the client stopped; it expires with its TTL");
                }
                Err(why)
            }
        }
    }
}

/// An attempt nobody waits for any more, settled by [`crate::settle`]. Its turn is kept until
/// then, so the owner's next request waits for the outcome.
struct Abandoned<K: AcquireKind> {
    core: Lock<K>,
    sent: Sent,
}

impl<K: AcquireKind> Unsettled for Abandoned<K> {
    type Found = (i64, K::Grant);

    fn client(&self) -> &Arc<ClientInner> {
        &self.core.client
    }

    fn key(&self) -> &Arc<str> {
        &self.core.key
    }

    fn sent_at(&self) -> Instant {
        self.sent.sent_at
    }

    async fn ask(&self) -> Result<Option<(i64, K::Grant)>> {
        let by_field = self.sent.by_field.then(|| self.sent.turn.field().clone());
        Ok(
            match self.core.settle(&self.sent.latch, by_field.as_deref()).await? {
                Reply::Granted { count, grant } => Some((count, grant)),
                _ => None,
            },
        )
    }

    async fn give_back(self, (count, grant): (i64, K::Grant)) -> Result<()> {
        // an abandoned grant is late: `record_grant` queues its release (were it ever recorded
        // as live, dropping its guard would release it all the same)
        if let Ok((held, _)) = self.core.record_grant(self.sent, count, grant, true) {
            drop(held);
        }
        Ok(())
    }
}

/// What an attempt in flight needs once its outcome is known.
struct Sent {
    turn: Turn,
    latch: String,
    /// The owner's field records the grant (its owner was new to the attempt): nothing was
    /// written in `latch` unless settling marked it cancelled.
    by_field: bool,
    expiry: Expiry,
    sent_at: Instant,
    need_ms: u64,
    owner: OwnerId,
}

/// An acquire request that may be in Redis. Dropped before [`AttemptInFlight::land`] (the caller's
/// future was cancelled mid-request, or the reply was lost and there was no time to ask), it
/// hands the attempt to [`crate::settle`]: the attempt's latch is resolved so that it either
/// never applies or is found granted and released. Cancel safety without boxing
/// every request: the background work exists only when a cancel happens.
struct AttemptInFlight<'a, K: AcquireKind> {
    core: &'a Lock<K>,
    sent: Option<Sent>,
}

impl<K: AcquireKind> AttemptInFlight<'_, K> {
    fn latch(&self) -> &str {
        self.sent.as_ref().map_or("", |s| s.latch.as_str())
    }

    /// The outcome is known: nothing left to settle.
    fn land(mut self) -> Sent {
        match self.sent.take() {
            Some(s) => s,
            // `sent` is only taken here (which consumes the flight) and in `drop`
            None => unreachable!("an attempt in flight without its request"),
        }
    }
}

impl<K: AcquireKind> Drop for AttemptInFlight<'_, K> {
    fn drop(&mut self) {
        if let Some(sent) = self.sent.take() {
            tracing::debug!(key = %self.core.key, field = %sent.turn.field(), "acquire abandoned while its request may be in Redis: settling it in the background");
            crate::settle::settle_in_background(Abandoned {
                core: self.core.clone(),
                sent,
            });
        }
    }
}

/// What one acquisition asks for (the same for each of its attempts).
#[derive(Clone, Copy)]
struct Plan {
    lease: Option<Duration>,
    own_ms: u64,
    deadline: Option<Instant>,
    wait_ms: u64,
    waits: bool,
    /// Every attempt's owner is new to it, and the kind keeps grants in the owner's field.
    by_field: bool,
}
