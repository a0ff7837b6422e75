//! The read-write lock's scripts: one hash with a `mode` field, reader fields and writer fields,
//! and one timeout key per read hold (`{N}:<read field>:rwlock_timeout:<k>`), which the read
//! unlock reads to decide how long the hash may still live.

use crate::redis::{Field, Key, Latch, Owner, Redis, ReqId, MODE_READ, MODE_WRITE};
use crate::rlock::{record, recorded, Acquired, Record};

/// `lua/rw/read_acquire.lua` (sent by `src/kinds/rw.rs`; or Redisson's read acquire when `how` is [`Record::Redisson`]).
pub fn read_acquire(
    r: &mut Redis,
    owner: Owner,
    latch: ReqId,
    how: Record,
    ttl: i64,
    latch_ttl: i64,
) -> Acquired {
    if how != Record::Redisson {
        if let Some(earlier) = recorded(r, latch) {
            return earlier;
        }
    }
    let reader = Field::Holder(owner);
    let granted = |holds| Acquired::Granted {
        count: holds,
        token: None,
    };
    let Some(mode) = r.hget(Key::Lock, Field::Mode) else {
        r.hset(Key::Lock, Field::Mode, MODE_READ);
        r.hset(Key::Lock, reader, 1);
        r.set(Key::ReadTimeout(owner, 1), crate::redis::Value::Int(1), Some(ttl));
        r.pexpire(Key::Lock, ttl);
        record(r, latch, 1, how, latch_ttl);
        return granted(1);
    };
    if how == Record::Field {
        if let Some(held) = r.hget(Key::Lock, reader) {
            return granted(held);
        }
    }
    if mode == MODE_READ || r.hget(Key::Lock, Field::Writer(owner)).is_some() {
        let holds = r.hincrby(Key::Lock, reader, 1);
        r.set(
            Key::ReadTimeout(owner, holds as u8),
            crate::redis::Value::Int(1),
            Some(ttl),
        );
        if r.pttl(Key::Lock) < ttl {
            r.pexpire(Key::Lock, ttl);
        }
        record(r, latch, holds, how, latch_ttl);
        return granted(holds);
    }
    Acquired::Refused
}

/// `lua/rw/write_acquire.lua` (sent by `src/kinds/rw.rs`; or Redisson's write acquire when `how` is [`Record::Redisson`]).
/// The models never re-enter a write hold (re-entry adds the TTL to the remaining one, as
/// Redisson does), nor ask for a write while holding a read (an error, not modelled).
pub fn write_acquire(
    r: &mut Redis,
    owner: Owner,
    latch: ReqId,
    how: Record,
    ttl: i64,
    latch_ttl: i64,
) -> Acquired {
    if how != Record::Redisson {
        if let Some(earlier) = recorded(r, latch) {
            return earlier;
        }
    }
    let writer = Field::Writer(owner);
    let Some(mode) = r.hget(Key::Lock, Field::Mode) else {
        r.hset(Key::Lock, Field::Mode, MODE_WRITE);
        r.hset(Key::Lock, writer, 1);
        r.pexpire(Key::Lock, ttl);
        record(r, latch, 1, how, latch_ttl);
        return Acquired::Granted {
            count: 1,
            token: None,
        };
    };
    let held = if mode == MODE_WRITE {
        r.hget(Key::Lock, writer)
    } else {
        None
    };
    match held {
        Some(h) if how == Record::Field => Acquired::Granted {
            count: h,
            token: None,
        },
        Some(_) => {
            let holds = r.hincrby(Key::Lock, writer, 1);
            let left = r.pttl(Key::Lock).max(0);
            r.pexpire(Key::Lock, left + ttl);
            record(r, latch, holds, how, latch_ttl);
            Acquired::Granted {
                count: holds,
                token: None,
            }
        }
        None => Acquired::Refused,
    }
}

/// `lua/rw/read_unlock.lua` (sent by `src/core/release.rs` through `src/kinds/rw.rs`; 3.44+ form with the latch). Reply as [`crate::rlock::unlock`].
pub fn read_unlock(r: &mut Redis, owner: Owner, id: ReqId, all: bool, latch_ttl: i64) -> Option<i64> {
    if let Some(Latch::Reply(earlier)) = r.latch(id) {
        return earlier;
    }
    let reader = Field::Holder(owner);
    let Some(mode) = r.hget(Key::Lock, Field::Mode) else {
        r.set_latch(id, Latch::Reply(None), latch_ttl);
        return None;
    };
    let count = r.hget(Key::Lock, reader)?;
    if all {
        r.hdel(Key::Lock, reader);
        for k in 1..=count {
            r.del(Key::ReadTimeout(owner, k as u8));
        }
    } else {
        let holds = r.hincrby(Key::Lock, reader, -1);
        if holds == 0 {
            r.hdel(Key::Lock, reader);
        }
        r.del(Key::ReadTimeout(owner, (holds + 1) as u8));
    }
    if r.hlen(Key::Lock) > 1 {
        let mut longest = -3;
        for (field, count) in r.hgetall(Key::Lock) {
            // every field's timeout keys are read: a writer's and the mode's do not exist
            if let Field::Holder(o) = field {
                for k in (1..=count).rev() {
                    longest = longest.max(r.pttl(Key::ReadTimeout(o, k as u8)));
                }
            } else if field != Field::Mode {
                longest = longest.max(-2);
            }
        }
        if longest > 0 {
            r.pexpire(Key::Lock, longest);
            r.set_latch(id, Latch::Reply(Some(0)), latch_ttl);
            return Some(0);
        }
        if mode == MODE_WRITE {
            r.set_latch(id, Latch::Reply(Some(0)), latch_ttl);
            return Some(0);
        }
    }
    r.del(Key::Lock);
    r.set_latch(id, Latch::Reply(Some(1)), latch_ttl);
    Some(1)
}

/// `lua/rw/write_unlock.lua` (sent by `src/core/release.rs` through `src/kinds/rw.rs`; 3.44+ form with the latch). Reply as [`crate::rlock::unlock`].
pub fn write_unlock(
    r: &mut Redis,
    owner: Owner,
    id: ReqId,
    all: bool,
    ttl: i64,
    latch_ttl: i64,
) -> Option<i64> {
    if let Some(Latch::Reply(earlier)) = r.latch(id) {
        return earlier;
    }
    let writer = Field::Writer(owner);
    let Some(mode) = r.hget(Key::Lock, Field::Mode) else {
        r.set_latch(id, Latch::Reply(None), latch_ttl);
        return None;
    };
    if mode != MODE_WRITE {
        return None;
    }
    r.hget(Key::Lock, writer)?;
    let holds = if all { 0 } else { r.hincrby(Key::Lock, writer, -1) };
    if holds > 0 {
        r.pexpire(Key::Lock, ttl);
        r.set_latch(id, Latch::Reply(Some(0)), latch_ttl);
        return Some(0);
    }
    r.hdel(Key::Lock, writer);
    if r.hlen(Key::Lock) == 1 {
        r.del(Key::Lock);
    } else {
        r.hset(Key::Lock, Field::Mode, MODE_READ);
    }
    r.set_latch(id, Latch::Reply(Some(1)), latch_ttl);
    Some(1)
}

/// `lua/rw/read_renew_batch.lua` (with `lua/common/extend_ttl.lua`; sent by `src/watchdog.rs`) for one reader: its timeout keys get the TTL and the hash lives
/// at least that long. Whether the field was still there.
pub fn read_renew(r: &mut Redis, owner: Owner, ttl: i64) -> bool {
    match r.hget(Key::Lock, Field::Holder(owner)) {
        Some(holds) if holds > 0 => {
            for k in (1..=holds).rev() {
                r.pexpire(Key::ReadTimeout(owner, k as u8), ttl);
            }
            if r.pttl(Key::Lock) < ttl {
                r.pexpire(Key::Lock, ttl);
            }
            true
        }
        _ => false,
    }
}
