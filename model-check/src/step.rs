//! The steps: which actions a state enables, and what each client-side action does. Each
//! transition's comment names the client code it stands for.

use stateright::{Model, Property};

use crate::client::{Client, Flavor, Msg, Op, Request, Status};
use crate::model::{seen, Action, Kind, Mutation, ProtocolModel, State};
use crate::redis::{ClientId, Key, Owner};

impl ProtocolModel {
    fn send(&self, s: &mut State, from: ClientId, req: Request) {
        s.requests.push(Msg {
            from,
            sent_at: s.redis.now,
            req,
            silent: false,
        });
        s.requests.sort();
    }

    fn fresh_id(s: &mut State) -> u8 {
        let id = s.next_id;
        s.next_id += 1;
        id
    }

    fn client_actions(&self, s: &State, id: ClientId, out: &mut Vec<Action>) {
        let c = &s.clients[usize::from(id)];
        if c.status == Status::Crashed {
            return;
        }
        let now = s.redis.now;
        let running = c.status == Status::Running;
        if running && c.op == Op::Idle && c.guards == 0 && c.acquisitions_left > 0 {
            out.push(Action::Acquire(id));
        }
        if running && c.op == Op::Wait && c.polls_left > 0 {
            out.push(Action::Retry(id));
        }
        if running
            && c.op == Op::Idle
            && c.trusts(now)
            && c.reentries_left > 0
            && c.spec.flavor != Flavor::Fresh
        {
            out.push(Action::Reenter(id));
        }
        if c.op == Op::Idle && c.guards > 0 {
            out.push(Action::Unlock(id));
        }
        let renewable = c.guards > 0 && !c.lost && now < c.trusted_until;
        let after_release = self.cfg.mutation == Mutation::RenewAfterRelease
            && c.released
            && c.hold > 0
            && now < c.trusted_until;
        if !s.renewing(id) && (renewable || after_release) {
            out.push(Action::Renew(id));
        }
        if matches!(c.op, Op::Acquire { .. } | Op::Wait) && running {
            out.push(Action::GiveUp(id));
        }
        let in_flight = s
            .requests
            .iter()
            .any(|m| m.from == id && !matches!(m.req, Request::Renew { .. }))
            || s.replies
                .iter()
                .any(|r| r.to == id && !matches!(r.reply, crate::client::Reply::Renewed { .. }));
        if (s.faults_left > 0 || !in_flight)
            && matches!(c.op, Op::Acquire { .. } | Op::Settle { .. } | Op::Unlock { .. })
        {
            out.push(Action::Timeout(id));
        }
        if c.guards > 0 && !c.lost && now >= c.trusted_until {
            out.push(Action::Expire(id));
        }
        if c.ours() && c.guards > 0 && !c.lost && s.count_of(c).is_none() {
            out.push(Action::Signal(id));
        }
        if self.cfg.shutdown && running && c.ours() {
            out.push(Action::Shutdown(id));
        }
        if s.crashes_left > 0 {
            out.push(Action::Crash(id));
        }
        if self.cfg.kind == Kind::Fenced && c.guards > 0 {
            if let Some(_t) = c.token {
                let w = c.work;
                let write_only = self.cfg.mutation == Mutation::WriteOnlyFence;
                if !w.claimed && !write_only && w.read_pending.is_none() {
                    out.push(Action::Claim(id));
                }
                if (w.claimed || write_only) && w.read_pending.is_none() {
                    out.push(Action::ReadRow(id));
                }
                if w.read_pending.is_some() && !w.wrote {
                    out.push(Action::WriteRow(id));
                }
            }
        }
    }

    /// Sends an acquisition attempt for the client's current owner.
    fn attempt(&self, s: &mut State, id: ClientId, reentry: bool) {
        let attempt = Self::fresh_id(s);
        let c = &mut s.clients[usize::from(id)];
        c.op = Op::Acquire {
            attempt,
            sent_at: s.redis.now,
            reentry,
        };
        let owner = c.owner;
        self.send(s, id, Request::Acquire { attempt, owner });
    }

    /// Sends an unlock of one hold (or all of the owner's) with a new request id.
    pub(crate) fn release(&self, s: &mut State, id: ClientId, all: bool) {
        let rid = Self::fresh_id(s);
        let c = &mut s.clients[usize::from(id)];
        c.op = Op::Unlock { id: rid, all };
        let owner = c.owner;
        self.send(s, id, Request::Unlock { id: rid, owner, all });
    }

    /// Sends a settle of `attempt`.
    fn settle(&self, s: &mut State, id: ClientId, attempt: u8, sent_at: u8, waiting: bool, reentry: bool) {
        let c = &mut s.clients[usize::from(id)];
        c.op = Op::Settle {
            attempt,
            sent_at,
            waiting,
            reentry,
        };
        let owner = c.owner;
        self.send(s, id, Request::Settle { attempt, owner });
    }

    /// A fair waiter leaves the queue (`lua/fair/give_up.lua`, `src/core/give_up.rs`).
    pub(crate) fn leave_queue(&self, s: &mut State, id: ClientId) {
        if self.cfg.kind == Kind::Fair {
            let owner = s.clients[usize::from(id)].owner;
            self.send(s, id, Request::GiveUp { owner });
        }
    }

    fn client_step(&self, s: &mut State, action: Action) {
        let now = s.redis.now;
        match action {
            // src/core/mod.rs (the wait loop): a new acquisition; the crate's default owner is
            // fresh per acquisition (src/owner.rs), Java's and a pinned one stay.
            Action::Acquire(id) => {
                let c = &mut s.clients[usize::from(id)];
                c.acquisitions_left -= 1;
                c.lost = false;
                c.released = false;
                c.gave_up = None;
                if c.spec.flavor == Flavor::Fresh {
                    c.owner = Owner {
                        client: id,
                        serial: c.spec.acquisitions - c.acquisitions_left,
                    };
                }
                self.attempt(s, id, false);
            }
            // src/core/mod.rs: another attempt of the same acquisition, same owner (a fair
            // waiter keeps its place in the queue).
            Action::Retry(id) => {
                s.clients[usize::from(id)].polls_left -= 1;
                self.attempt(s, id, false);
            }
            // src/core/guard.rs (`Guard::reenter`): another hold of a held owner; its attempt
            // writes a latch record (lua/common/attempt.lua).
            Action::Reenter(id) => {
                s.clients[usize::from(id)].reentries_left -= 1;
                self.attempt(s, id, true);
            }
            // src/core/release.rs: a guard whose hold is known to have ended sends nothing
            // (`Error::NotHeld`); otherwise one hold is released with a new request id.
            Action::Unlock(id) => {
                let c = &mut s.clients[usize::from(id)];
                c.guards -= 1;
                if c.ours() && c.lost {
                    c.guards = 0;
                    return;
                }
                c.released = c.guards == 0;
                // the crate's last guard of an epoch releases every hold of the field (counts
                // left by holds it knows are lost go too); Redisson releases one
                let all = c.ours() && c.guards == 0;
                self.release(s, id, all);
            }
            // src/watchdog.rs: one renewal (lua/lock/renew_batch.lua, lua/rw/read_renew_batch.lua)
            // of the hold's current serial.
            Action::Renew(id) => {
                let c = &s.clients[usize::from(id)];
                let (owner, hold) = (c.owner, c.hold);
                self.send(s, id, Request::Renew { owner, hold });
            }
            // src/core/give_up.rs: the caller stops waiting. An attempt that may be in Redis is
            // settled (src/settle.rs); a fair waiter leaves the queue. Redisson's caller gives
            // up without settling (its fair waiter leaves the queue: acquireFailed).
            Action::GiveUp(id) => {
                let c = &mut s.clients[usize::from(id)];
                let op = c.op;
                c.gave_up = (c.spec.flavor == Flavor::Fresh).then_some((c.owner, s.redis.epoch));
                match op {
                    Op::Acquire {
                        attempt,
                        sent_at,
                        reentry,
                    } if c.ours() => {
                        if self.cfg.mutation == Mutation::TrustLateGrant {
                            c.abandoned = Some(attempt);
                            c.op = Op::Idle;
                            self.leave_queue(s, id);
                        } else {
                            self.settle(s, id, attempt, sent_at, false, reentry);
                        }
                    }
                    _ => {
                        c.op = Op::Idle;
                        self.leave_queue(s, id);
                    }
                }
            }
            // src/once.rs: a request whose reply did not come. An acquire is never sent again:
            // it is settled (src/settle.rs); a settle or an unlock is sent again with the same
            // id. Redisson's acquisition ends in an exception.
            Action::Timeout(id) => {
                // a timeout while something may still come costs a fault; a request lost with
                // its connection (nothing in flight) is a connection error, free
                let in_flight = s
                    .requests
                    .iter()
                    .any(|m| m.from == id && !matches!(m.req, Request::Renew { .. }))
                    || s.replies
                        .iter()
                        .any(|r| r.to == id && !matches!(r.reply, crate::client::Reply::Renewed { .. }));
                if in_flight {
                    s.faults_left -= 1;
                }
                let c = &mut s.clients[usize::from(id)];
                let owner = c.owner;
                match c.op {
                    Op::Acquire {
                        attempt,
                        sent_at,
                        reentry,
                    } => {
                        if c.ours() {
                            self.settle(s, id, attempt, sent_at, true, reentry);
                        } else {
                            c.op = Op::Idle;
                            self.leave_queue(s, id);
                        }
                    }
                    Op::Settle { attempt, .. } => self.send(s, id, Request::Settle { attempt, owner }),
                    Op::Unlock { id: rid, all } => self.send(s, id, Request::Unlock { id: rid, owner, all }),
                    Op::Idle | Op::Wait => {}
                }
            }
            // src/hold_record.rs: the window of the last grant or renewal passed: the loss is final.
            Action::Expire(id) => s.clients[usize::from(id)].lost = true,
            // src/loss_watch/mod.rs: the tracked key changed and the HEXISTS read found the
            // owner's field gone.
            Action::Signal(id) => {
                s.clients[usize::from(id)].lost = true;
                s.ghost.seen |= seen::SIGNALLED;
            }
            // src/client.rs (`Client::shutdown`): no new acquisitions; live holds released (all
            // of the owner's), waiting ones settled, fair waiters leave.
            Action::Shutdown(id) => {
                let c = &mut s.clients[usize::from(id)];
                c.status = Status::ShutDown;
                c.acquisitions_left = 0;
                c.reentries_left = 0;
                c.polls_left = 0;
                match c.op {
                    Op::Acquire {
                        attempt,
                        sent_at,
                        reentry,
                    } => self.settle(s, id, attempt, sent_at, false, reentry),
                    Op::Wait => {
                        c.op = Op::Idle;
                        self.leave_queue(s, id);
                    }
                    Op::Idle if c.guards > 0 => {
                        let lost = c.lost;
                        c.guards = 0;
                        c.released = !lost;
                        if !lost {
                            self.release(s, id, true);
                        }
                    }
                    _ => {}
                }
            }
            Action::Crash(id) => {
                s.crashes_left -= 1;
                s.clients[usize::from(id)].status = Status::Crashed;
                s.replies.retain(|r| r.to != id);
            }
            // examples/fenced_write/: UPDATE orders SET fence = :token WHERE fence < :token
            Action::Claim(id) => {
                let c = &mut s.clients[usize::from(id)];
                let token = c.token.unwrap_or(0);
                c.work.claimed = true;
                if !s.resource.claim(token) {
                    // refused: a newer holder came; the work stops here
                    c.work.read_pending = Some(false);
                    c.work.wrote = true;
                    s.ghost.seen |= seen::STALE_REFUSED;
                }
            }
            Action::ReadRow(id) => {
                s.clients[usize::from(id)].work.read_pending = Some(s.resource.charged == 0);
            }
            // ... AND fence <= :token in the write's own statement
            Action::WriteRow(id) => {
                let c = &mut s.clients[usize::from(id)];
                c.work.wrote = true;
                let token = c.token.unwrap_or(0);
                let before = s.resource.charged;
                let pending = c.work.read_pending == Some(true);
                s.resource
                    .write(token, pending, self.cfg.mutation == Mutation::WriteOnlyFence);
                if pending && s.resource.charged == before {
                    s.ghost.seen |= seen::STALE_REFUSED;
                }
            }
            _ => unreachable!("not a client step"),
        }
        let _ = now;
    }

    /// Recomputes the orphan clock: the lock has no live owner (a running or shutting-down
    /// client whose field is in it, holding or with something in flight) and nothing is in
    /// flight.
    fn update_orphan(&self, s: &mut State) {
        let lock = s.redis.hgetall(Key::Lock);
        let owned = s.clients.iter().any(|c: &Client| {
            c.status != Status::Crashed && lock.contains_key(&c.field()) && (c.guards > 0 || c.op != Op::Idle)
        });
        let orphan = !lock.is_empty() && !owned && s.requests.is_empty();
        if !orphan {
            s.ghost.orphan_since = None;
        } else if s.ghost.orphan_since.is_none() {
            s.ghost.orphan_since = Some(s.redis.now);
        }
    }
}

impl Model for ProtocolModel {
    type State = State;
    type Action = Action;

    fn init_states(&self) -> Vec<State> {
        vec![self.init()]
    }

    fn actions(&self, s: &State, out: &mut Vec<Action>) {
        if s.redis.now < self.cfg.max_ticks {
            out.push(Action::Tick);
        }
        for id in 0..s.clients.len() {
            self.client_actions(s, id as ClientId, out);
        }
        let mut last = None;
        for m in &s.requests {
            if last == Some(*m) {
                continue;
            }
            last = Some(*m);
            out.push(Action::Deliver(*m));
            if s.faults_left > 0 {
                out.push(Action::DeliverLoseReply(*m));
                out.push(Action::Drop(*m));
                if self.cfg.duplicates && !m.silent && matches!(m.req, Request::Acquire { .. }) {
                    out.push(Action::Duplicate(*m));
                }
            }
        }
        let mut last = None;
        for r in &s.replies {
            if last != Some(*r) {
                out.push(Action::Receive(*r));
            }
            last = Some(*r);
        }
        if s.losses_left > 0 {
            out.push(Action::Restart);
            out.push(Action::Failover);
        }
    }

    fn next_state(&self, last: &State, action: Action) -> Option<State> {
        let mut s = last.clone();
        match action {
            Action::Tick => {
                let had_lock = s.redis.exists(Key::Lock);
                s.redis.tick();
                if had_lock && !s.redis.exists(Key::Lock) {
                    s.ghost.seen |= seen::EXPIRED;
                }
            }
            Action::Deliver(m) => self.deliver(&mut s, m, true),
            Action::DeliverLoseReply(m) => {
                s.faults_left -= 1;
                s.ghost.seen |= seen::REPLY_LOST;
                self.deliver(&mut s, m, false)
            }
            Action::Drop(m) => {
                s.faults_left -= 1;
                let i = s.requests.iter().position(|x| *x == m)?;
                s.requests.remove(i);
            }
            // a connection layer re-sends a request after its connection dropped: the first
            // copy may still run, but its reply is never read
            Action::Duplicate(m) => {
                s.faults_left -= 1;
                let i = s.requests.iter().position(|x| *x == m)?;
                s.requests[i].silent = true;
                s.requests.push(m);
                s.requests.sort();
            }
            Action::Receive(r) => {
                let i = s.replies.iter().position(|x| *x == r)?;
                s.replies.remove(i);
                self.receive(&mut s, r);
            }
            Action::Restart | Action::Failover => {
                s.losses_left -= 1;
                if action == Action::Restart {
                    s.redis.restart();
                } else {
                    s.redis.failover();
                }
                s.ghost.seen |= seen::DATA_LOSS;
                s.ghost.loss_at.push(s.redis.now);
                // the unlocks applied before are history the surviving data no longer has
                s.ghost.unlocks_applied.clear();
                // the server's connections are gone: what was in flight is lost with them
                s.requests.clear();
                s.replies.clear();
            }
            _ => self.client_step(&mut s, action),
        }
        self.update_orphan(&mut s);
        let now = s.redis.now;
        let trusting: Vec<&Client> = s.clients.iter().filter(|c| c.trusts(now)).collect();
        if trusting.len() > 1 && trusting.iter().any(|c| c.epoch != trusting[0].epoch) {
            s.ghost.seen |= seen::OVERLAP_AFTER_LOSS;
        }
        Some(s)
    }

    fn properties(&self) -> Vec<Property<Self>> {
        crate::properties::all()
    }
}
