//! The fair lock's scripts: the queue `redisson_lock_queue:{N}` (owners in arrival order) and the
//! deadlines `redisson_lock_timeout:{N}` (owner → the tick after which that waiter counts as
//! gone), in ticks instead of epoch milliseconds.

use crate::redis::{Field, Key, Latch, Owner, Redis, ReqId};
use crate::rlock::{record, recorded, Acquired, Record};

/// `purge_stale` of `lua/fair/purge.lua`: drops heads whose deadline passed. With `purge ==
/// false` (the [`Mutation::FairNoPurge`](crate::model::Mutation) mutant) nothing is dropped.
pub fn purge_stale(r: &mut Redis, purge: bool) {
    if !purge {
        return;
    }
    let mut queue = r.list(Key::Queue);
    let mut deadlines = r.zset(Key::Deadlines);
    let now = i64::from(r.now);
    while let Some(head) = queue.first().copied() {
        match deadlines.get(&head) {
            Some(d) if *d <= now => {
                deadlines.remove(&head);
                queue.remove(0);
            }
            _ => break,
        }
    }
    r.set_list(Key::Queue, queue);
    r.set_zset(Key::Deadlines, deadlines);
}

/// `lua/fair/acquire.lua` (sent by `src/kinds/fair.rs`) with queueing on (`lock()`, `tryLock(wait)`), or Redisson's RFairLock
/// acquire when `how` is [`Record::Redisson`] (the same effect, no latch). `wait` is the
/// waiter's budget (Redisson's `threadWaitTime`) in ticks.
#[allow(clippy::too_many_arguments)]
pub fn acquire(
    r: &mut Redis,
    owner: Owner,
    latch: ReqId,
    how: Record,
    ttl: i64,
    wait: i64,
    latch_ttl: i64,
    purge: bool,
) -> Acquired {
    if how != Record::Redisson {
        if let Some(earlier) = recorded(r, latch) {
            return earlier;
        }
    }
    purge_stale(r, purge);
    let now = i64::from(r.now);
    let mut queue = r.list(Key::Queue);
    let mut deadlines = r.zset(Key::Deadlines);
    let field = Field::Holder(owner);
    if !r.exists(Key::Lock) && (queue.is_empty() || queue[0] == owner) {
        if !queue.is_empty() {
            queue.remove(0);
        }
        deadlines.remove(&owner);
        for d in deadlines.values_mut() {
            *d -= wait;
        }
        r.set_list(Key::Queue, queue);
        r.set_zset(Key::Deadlines, deadlines);
        r.hset(Key::Lock, field, 1);
        r.pexpire(Key::Lock, ttl);
        record(r, latch, 1, how, latch_ttl);
        return Acquired::Granted {
            count: 1,
            token: None,
        };
    }
    if let Some(held) = r.hget(Key::Lock, field) {
        if how == Record::Field {
            return Acquired::Granted {
                count: held,
                token: None,
            };
        }
        let holds = r.hincrby(Key::Lock, field, 1);
        r.pexpire(Key::Lock, ttl);
        record(r, latch, holds, how, latch_ttl);
        return Acquired::Granted {
            count: holds,
            token: None,
        };
    }
    if deadlines.contains_key(&owner) {
        return Acquired::Refused;
    }
    let expect = match queue.last() {
        Some(last) if *last != owner && deadlines.contains_key(last) => deadlines[last] - now,
        _ => r.pttl(Key::Lock),
    };
    deadlines.insert(owner, expect + wait + now);
    if !queue.contains(&owner) {
        queue.push(owner);
    }
    r.set_list(Key::Queue, queue);
    r.set_zset(Key::Deadlines, deadlines);
    Acquired::Refused
}

/// `lua/fair/give_up.lua` (sent by `src/core/give_up.rs` through `src/kinds/fair.rs`): the
/// waiter leaves the queue; those behind it get `wait` back.
pub fn give_up(r: &mut Redis, owner: Owner, wait: i64) {
    let mut queue = r.list(Key::Queue);
    let mut deadlines = r.zset(Key::Deadlines);
    if let Some(at) = queue.iter().position(|o| *o == owner) {
        let behind: Vec<Owner> = queue[at + 1..].to_vec();
        queue.retain(|o| *o != owner);
        for b in behind {
            if let Some(d) = deadlines.get_mut(&b) {
                *d -= wait;
            }
        }
    }
    deadlines.remove(&owner);
    r.set_list(Key::Queue, queue);
    r.set_zset(Key::Deadlines, deadlines);
}

/// `lua/fair/unlock.lua` (sent by `src/core/release.rs` through `src/kinds/fair.rs`; 3.24+ form
/// with the latch; the head waiter's wake-up is not modelled:
/// waiters poll). Reply as [`crate::rlock::unlock`].
pub fn unlock(
    r: &mut Redis,
    owner: Owner,
    id: ReqId,
    all: bool,
    ttl: i64,
    latch_ttl: i64,
    purge: bool,
) -> Option<i64> {
    if let Some(Latch::Reply(earlier)) = r.latch(id) {
        return earlier;
    }
    purge_stale(r, purge);
    let field = Field::Holder(owner);
    r.hget(Key::Lock, field)?;
    if !all {
        let remaining = r.hincrby(Key::Lock, field, -1);
        if remaining > 0 {
            r.pexpire(Key::Lock, ttl);
            r.set_latch(id, Latch::Reply(Some(0)), latch_ttl);
            return Some(0);
        }
    }
    r.del(Key::Lock);
    r.set_latch(id, Latch::Reply(Some(1)), latch_ttl);
    Some(1)
}
