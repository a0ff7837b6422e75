//! The RLock's scripts and the ones every kind shares (an attempt's record, settling, the
//! renewal batch), as functions of the modelled [`Redis`]. Each runs whole, inside
//! [`Redis::script`].

use crate::redis::{Field, Key, Latch, Owner, Redis, ReqId};

/// Where an acquisition attempt's grant is recorded (`lua/common/attempt.lua`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Record {
    /// Redisson's own acquire: no latch is read or written (the Java party).
    Redisson,
    /// Latch TTL `'0'`: the owner is new to this attempt, its field is the record.
    Field,
    /// Latch TTL > 0: the grant's hold count is written to the attempt's latch (a pinned owner).
    Latch,
}

/// An acquire script's reply.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Acquired {
    /// `{1, count[, token]}`.
    Granted {
        /// The owner's hold count after the grant.
        count: i64,
        /// The fencing token (fenced lock only).
        token: Option<i64>,
    },
    /// `{0, pttl}`: held by someone else (or queued behind someone, for the fair lock).
    Refused,
    /// `{2, 0}`: the attempt was settled before it arrived; nothing changed.
    Cancelled,
}

/// `recorded(latch)` of `lua/common/attempt.lua`: a cancelled attempt, or a recorded grant to
/// replay; `None` the first time.
pub fn recorded(r: &Redis, latch: ReqId) -> Option<Acquired> {
    match r.latch(latch)? {
        Latch::Cancelled => Some(Acquired::Cancelled),
        Latch::Count(c) => Some(Acquired::Granted {
            count: c,
            token: None,
        }),
        Latch::CountToken(c, t) => Some(Acquired::Granted {
            count: c,
            token: Some(t),
        }),
        Latch::Reply(_) => None,
    }
}

/// `record(latch, holds, latch_ms)` of `lua/common/attempt.lua`.
pub fn record(r: &mut Redis, latch: ReqId, holds: i64, how: Record, latch_ttl: i64) {
    if how == Record::Latch {
        r.set_latch(latch, Latch::Count(holds), latch_ttl);
    }
}

/// `lua/lock/acquire.lua` (our attempt, sent by `src/kinds/reentrant.rs` through the wait loop
/// of `src/core/mod.rs`), or Redisson's RLock acquire when `how` is [`Record::Redisson`] (the
/// same effect on the lock, no latch).
pub fn acquire(r: &mut Redis, owner: Owner, latch: ReqId, how: Record, ttl: i64, latch_ttl: i64) -> Acquired {
    if how != Record::Redisson {
        if let Some(earlier) = recorded(r, latch) {
            return earlier;
        }
    }
    let field = Field::Holder(owner);
    if r.exists(Key::Lock) {
        match r.hget(Key::Lock, field) {
            Some(held) if how == Record::Field => {
                return Acquired::Granted {
                    count: held,
                    token: None,
                }
            }
            None => return Acquired::Refused,
            Some(_) => {}
        }
    }
    let holds = r.hincrby(Key::Lock, field, 1);
    r.pexpire(Key::Lock, ttl);
    record(r, latch, holds, how, latch_ttl);
    Acquired::Granted {
        count: holds,
        token: None,
    }
}

/// `lua/lock/unlock.lua` (Redisson 3.24+ with the latch; sent by `src/core/release.rs`, retried
/// with the same id by `src/once.rs`). With `latch == false` (the
/// [`Mutation::NoUnlockLatch`](crate::model::Mutation) mutant: Redisson before 3.24) the latch
/// is neither read nor written. Reply: `None` = not held, `Some(0)` still held, `Some(1)` released.
pub fn unlock(
    r: &mut Redis,
    owner: Owner,
    id: ReqId,
    all: bool,
    ttl: i64,
    latch_ttl: i64,
    latch: bool,
) -> Option<i64> {
    if latch {
        if let Some(Latch::Reply(earlier)) = r.latch(id) {
            return earlier;
        }
    }
    let field = Field::Holder(owner);
    r.hget(Key::Lock, field)?;
    if !all {
        let remaining = r.hincrby(Key::Lock, field, -1);
        if remaining > 0 {
            r.pexpire(Key::Lock, ttl);
            if latch {
                r.set_latch(id, Latch::Reply(Some(0)), latch_ttl);
            }
            return Some(0);
        }
    }
    r.del(Key::Lock);
    if latch {
        r.set_latch(id, Latch::Reply(Some(1)), latch_ttl);
    }
    Some(1)
}

/// `lua/lock/renew_batch.lua` (with `lua/common/extend_ttl.lua`; sent by `src/watchdog.rs`) for one key: the owner's field present → the TTL is raised to
/// `ttl` (never shortened). Whether it was renewed.
pub fn renew(r: &mut Redis, field: Field, ttl: i64) -> bool {
    if r.hget(Key::Lock, field).is_none() {
        return false;
    }
    if r.pttl(Key::Lock) < ttl {
        r.pexpire(Key::Lock, ttl);
    }
    true
}

/// `lua/common/resolve_acquire.lua` (sent by `src/settle.rs` for a pinned owner's attempt, the
/// script chosen in `src/kinds/mod.rs`): a recorded grant, or `None` after marking the latch
/// `cancelled` (so a copy still on its way changes nothing).
pub fn resolve_acquire(r: &mut Redis, latch: ReqId, latch_ttl: i64) -> Option<(i64, Option<i64>)> {
    match r.latch(latch) {
        None | Some(Latch::Reply(_)) => {
            r.set_latch(latch, Latch::Cancelled, latch_ttl);
            None
        }
        Some(Latch::Cancelled) => None,
        Some(Latch::Count(c)) => Some((c, None)),
        Some(Latch::CountToken(c, t)) => Some((c, Some(t))),
    }
}

/// `lua/common/resolve_by_field.lua` (sent by `src/settle.rs` for a fresh owner's attempt):
/// marks a missing latch `cancelled` (so no later copy of the attempt applies, also after a
/// granted hold is released), then the field's count when the owner's field is in the lock,
/// else `None`. With `mark == false` (the
/// [`Mutation::NoSettleMarker`](crate::model::Mutation) mutant) nothing is marked.
pub fn resolve_by_field(
    r: &mut Redis,
    latch: ReqId,
    field: Field,
    latch_ttl: i64,
    mark: bool,
) -> Option<i64> {
    if mark && r.latch(latch).is_none() {
        r.set_latch(latch, Latch::Cancelled, latch_ttl);
    }
    r.hget(Key::Lock, field)
}
