//! Requests reaching Redis (each runs one whole script, chosen by the lock kind and the
//! client's side) and replies reaching their client.

use crate::client::{grant_of, Client, Flavor, Msg, Op, Reply, ReplyMsg, Request, Role, Status};
use crate::model::{seen, Kind, Mutation, ProtocolModel, State};
use crate::redis::{Field, Key, Owner, Redis};
use crate::rlock::{self, Record};
use crate::{fair, fenced, rwlock};

impl ProtocolModel {
    /// Runs the script `m` stands for.
    fn run(&self, r: &mut Redis, m: Msg, role: Role, how: Record) -> Option<Reply> {
        let cfg = &self.cfg;
        let ttl = i64::from(cfg.ttl);
        let latch_ttl = cfg.latch_ttl();
        let purge = cfg.mutation != Mutation::FairNoPurge;
        let field = |o: Owner| match role {
            Role::Write => Field::Writer(o),
            _ => Field::Holder(o),
        };
        match m.req {
            Request::Acquire { attempt, owner } => {
                let a = match (cfg.kind, role) {
                    (Kind::RLock, _) => rlock::acquire(r, owner, attempt, how, ttl, latch_ttl),
                    (Kind::Fenced, _) => {
                        fenced::acquire(r, owner, attempt, how == Record::Redisson, ttl, latch_ttl)
                    }
                    (Kind::Fair, _) => fair::acquire(
                        r,
                        owner,
                        attempt,
                        how,
                        ttl,
                        i64::from(cfg.fair_wait),
                        latch_ttl,
                        purge,
                    ),
                    (Kind::ReadWrite, Role::Write) => {
                        rwlock::write_acquire(r, owner, attempt, how, ttl, latch_ttl)
                    }
                    (Kind::ReadWrite, _) => rwlock::read_acquire(r, owner, attempt, how, ttl, latch_ttl),
                };
                Some(Reply::Acquired {
                    attempt,
                    grant: grant_of(a),
                    epoch: r.epoch,
                })
            }
            Request::Settle { attempt, owner } => {
                let grant = if how == Record::Field {
                    let mark = cfg.mutation != Mutation::NoSettleMarker;
                    rlock::resolve_by_field(r, attempt, field(owner), latch_ttl, mark).map(|c| (c, None))
                } else {
                    rlock::resolve_acquire(r, attempt, latch_ttl)
                };
                Some(Reply::Settled {
                    attempt,
                    grant,
                    epoch: r.epoch,
                })
            }
            Request::Unlock { id, owner, all } => {
                let latch = cfg.mutation != Mutation::NoUnlockLatch;
                let result = match (cfg.kind, role) {
                    (Kind::RLock | Kind::Fenced, _) => {
                        rlock::unlock(r, owner, id, all, ttl, latch_ttl, latch)
                    }
                    (Kind::Fair, _) => fair::unlock(r, owner, id, all, ttl, latch_ttl, purge),
                    (Kind::ReadWrite, Role::Write) => rwlock::write_unlock(r, owner, id, all, ttl, latch_ttl),
                    (Kind::ReadWrite, _) => rwlock::read_unlock(r, owner, id, all, latch_ttl),
                };
                Some(Reply::Unlocked { id, result })
            }
            Request::Renew { owner, hold } => {
                let ok = if cfg.kind == Kind::ReadWrite && role == Role::Read {
                    rwlock::read_renew(r, owner, ttl)
                } else {
                    rlock::renew(r, field(owner), ttl)
                };
                Some(Reply::Renewed {
                    sent_at: m.sent_at,
                    hold,
                    ok,
                    epoch: r.epoch,
                })
            }
            // fire and forget: nobody reads its reply
            Request::GiveUp { owner } => {
                fair::give_up(r, owner, i64::from(cfg.fair_wait));
                None
            }
        }
    }

    /// Redis runs request `m`; its reply goes back when `reply`.
    pub(crate) fn deliver(&self, s: &mut State, m: Msg, reply: bool) {
        let Some(i) = s.requests.iter().position(|x| *x == m) else {
            return;
        };
        s.requests.remove(i);
        let c = &s.clients[usize::from(m.from)];
        let (role, how) = (c.spec.role, c.record(self.cfg.kind == Kind::Fenced));
        let lock_before = s.redis.store.get(&Key::Lock).cloned();
        let queue_before = s.redis.list(Key::Queue);
        let deadlines_before = s.redis.zset(Key::Deadlines);
        let latch_before = match m.req {
            Request::Acquire { attempt, .. } => s.redis.latch(attempt),
            _ => None,
        };
        let out = s.redis.script(|r| self.run(r, m, role, how));
        let lock_after = s.redis.store.get(&Key::Lock).cloned();
        let now = i64::from(s.redis.now);
        match (m.req, out) {
            (Request::Unlock { id, .. }, _) => {
                if lock_before != lock_after {
                    if s.ghost.unlocks_applied.contains(&id) {
                        s.ghost.unlock_twice = true;
                    } else {
                        s.ghost.unlocks_applied.push(id);
                    }
                } else if s.ghost.unlocks_applied.contains(&id) {
                    s.ghost.seen |= seen::LATCH_REPLAY;
                }
            }
            (Request::Acquire { owner, .. }, Some(Reply::Acquired { grant, .. })) => {
                if latch_before == Some(crate::redis::Latch::Cancelled) {
                    s.ghost.seen |= seen::LATE_COPY;
                }
                if self.cfg.kind == Kind::Fair {
                    let new_hold = grant.is_some() && lock_before.is_none();
                    self.check_fair(s, owner, new_hold, &queue_before, &deadlines_before, now);
                }
            }
            _ => {}
        }
        if let (true, false, Some(out)) = (reply, m.silent, out) {
            if s.clients[usize::from(m.from)].status == Status::Crashed {
                return;
            }
            s.replies.push(ReplyMsg {
                to: m.from,
                reply: out,
            });
            s.replies.sort();
        }
    }

    /// The fair queue's promises at one acquire: a grant of a free lock skips no live waiter (a client still
    /// waiting for the owner queued ahead, whose deadline has not passed); a refusal of a free
    /// lock is never caused by a head whose deadline passed.
    fn check_fair(
        &self,
        s: &mut State,
        owner: Owner,
        granted: bool,
        queue_before: &[Owner],
        deadlines_before: &std::collections::BTreeMap<Owner, i64>,
        now: i64,
    ) {
        if !s.redis.list(Key::Queue).is_empty() {
            s.ghost.seen |= seen::QUEUED;
        }
        if granted {
            let ahead = queue_before.iter().take_while(|o| **o != owner);
            for y in ahead {
                let c = &s.clients[usize::from(y.client)];
                let waiting = c.status == Status::Running
                    && c.owner == *y
                    && c.guards == 0
                    && matches!(
                        c.op,
                        Op::Acquire { .. } | Op::Wait | Op::Settle { waiting: true, .. }
                    );
                if waiting && deadlines_before.get(y).is_some_and(|d| *d > now) {
                    s.ghost.skipped_live = true;
                }
            }
        } else if !s.redis.exists(Key::Lock) {
            let queue = s.redis.list(Key::Queue);
            let deadlines = s.redis.zset(Key::Deadlines);
            if let Some(head) = queue.first() {
                if *head != owner && deadlines.get(head).is_some_and(|d| *d <= now) {
                    s.ghost.dead_head_blocked = true;
                }
            }
        }
    }

    /// `src/holds/mod.rs` (`grant_in`): a grant joins the live epoch of the owner's holds when
    /// Redis' count is one more than the guards; any other count means Redis lost or has holds
    /// the client never saw: the old guards are stale and the grant starts a new epoch.
    /// (Redisson counts any grant of a held owner as a re-entry.)
    fn joins(c: &Client, count: i64, now: u8) -> bool {
        if c.ours() {
            c.trusts(now) && count == i64::from(c.guards) + 1
        } else {
            c.guards > 0
        }
    }

    /// Takes a grant sent at `sent_at`: another hold of the live epoch, or a new epoch.
    #[allow(clippy::too_many_arguments)]
    fn take(&self, s: &mut State, id: u8, sent_at: u8, epoch: u8, count: i64, token: Option<i64>) {
        let ttl = self.cfg.ttl;
        let now = s.redis.now;
        let c = &mut s.clients[usize::from(id)];
        if Self::joins(c, count, now) {
            c.guards += 1;
            c.trusted_until = c.trusted_until.max(sent_at + ttl);
        } else {
            c.guards = 1;
            c.hold += 1;
            c.lost = false;
            c.released = false;
            c.trusted_until = sent_at + ttl;
            c.epoch = epoch;
            c.work = fenced::Work::default();
        }
        if token.is_some() {
            c.token = token;
        }
        c.op = Op::Idle;
        if !c.trusts(now) {
            return;
        }
        s.ghost.seen |= seen::ACQUIRED;
        if let Some(t) = token {
            if let Some((e, last)) = s.ghost.last_token {
                if e == epoch && t <= last {
                    s.ghost.token_regressed = true;
                }
            }
            s.ghost.last_token = Some((epoch, t));
        }
    }

    /// Client `r.to` reads reply `r`.
    pub(crate) fn receive(&self, s: &mut State, r: ReplyMsg) {
        let id = r.to;
        let now = s.redis.now;
        let ttl = self.cfg.ttl;
        let c = &s.clients[usize::from(id)];
        if c.status == Status::Crashed {
            return;
        }
        match (r.reply, c.op) {
            // src/core/mod.rs: a grant is trusted from when it was sent; one read after that
            // window is released at once (src/core/release.rs), Redisson takes it.
            (
                Reply::Acquired {
                    attempt,
                    grant,
                    epoch,
                },
                Op::Acquire {
                    attempt: a, sent_at, ..
                },
            ) if a == attempt => match grant {
                Some((count, token))
                    if now < sent_at + ttl || c.spec.flavor == Flavor::Java || Self::joins(c, count, now) =>
                {
                    self.take(s, id, sent_at, epoch, count, token)
                }
                Some((count, _)) => {
                    s.ghost.seen |= seen::LATE_GRANT;
                    let all = !Self::joins(c, count, now);
                    self.release(s, id, all);
                }
                None => s.clients[usize::from(id)].op = Op::Wait,
            },
            // The TrustLateGrant mutant: a grant read after the caller gave up is taken, trusted
            // from when it was read.
            (
                Reply::Acquired {
                    attempt,
                    grant: Some((count, token)),
                    epoch,
                },
                _,
            ) if c.abandoned == Some(attempt) && c.guards == 0 => {
                s.clients[usize::from(id)].abandoned = None;
                self.take(s, id, now, epoch, count, token);
            }
            // src/settle.rs: a grant found is kept if the caller still waits and can trust it,
            // else released at once (the one hold it added, or all of a fresh owner's).
            (
                Reply::Settled {
                    attempt,
                    grant,
                    epoch,
                },
                Op::Settle {
                    attempt: a,
                    sent_at,
                    waiting,
                    ..
                },
            ) if a == attempt => match grant {
                Some((count, token)) if waiting && (now < sent_at + ttl || Self::joins(c, count, now)) => {
                    s.ghost.seen |= seen::SETTLED_GRANT;
                    self.take(s, id, sent_at, epoch, count, token)
                }
                Some((count, _)) => {
                    s.ghost.seen |= seen::LATE_GRANT;
                    let all = !Self::joins(c, count, now);
                    self.release(s, id, all);
                }
                None if waiting => s.clients[usize::from(id)].op = Op::Wait,
                None => {
                    s.clients[usize::from(id)].op = Op::Idle;
                    self.leave_queue(s, id);
                }
            },
            // src/core/release.rs: the unlock answered; `nil` means the hold was already gone.
            (Reply::Unlocked { id: rid, result }, Op::Unlock { id: want, .. }) if rid == want => {
                let c = &mut s.clients[usize::from(id)];
                c.op = Op::Idle;
                if result.is_none() && c.guards > 0 {
                    c.lost = true;
                }
            }
            // src/holds/extend.rs: a renewal's success extends the window from when it was sent,
            // unless the loss was already reported (final); a failure ends the hold.
            (
                Reply::Renewed {
                    sent_at,
                    hold,
                    ok,
                    epoch,
                },
                _,
            ) => {
                let mutant = self.cfg.mutation == Mutation::RenewAfterRelease;
                let c = &mut s.clients[usize::from(id)];
                if hold != c.hold {
                    return;
                }
                if c.guards > 0 && !c.lost {
                    if ok {
                        if now >= c.trusted_until {
                            s.ghost.seen |= seen::LATE_RENEWAL;
                        }
                        c.trusted_until = c.trusted_until.max(sent_at + ttl);
                        c.epoch = epoch;
                    } else {
                        c.lost = true;
                    }
                } else if mutant && ok && c.released && c.op == Op::Idle {
                    c.guards = 1;
                    c.lost = false;
                    c.trusted_until = sent_at + ttl;
                    c.epoch = epoch;
                }
            }
            _ => {}
        }
    }
}

/// Whether `role`'s holds conflict with `other`'s.
pub fn conflict(a: Role, b: Role) -> bool {
    !(a == Role::Read && b == Role::Read)
}
