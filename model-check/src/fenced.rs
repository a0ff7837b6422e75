//! The fenced lock's acquire (the RLock's, plus one `INCR` of the token counter per grant) and
//! the protected resource that checks tokens: the order row of `examples/fenced_write/`, which
//! keeps the highest token it has seen (`fence`) and is charged at most once.

use crate::redis::{Field, Key, Latch, Owner, Redis, ReqId};
use crate::rlock::{recorded, Acquired};

/// `lua/fenced/acquire.lua` (ours, sent by `src/kinds/fenced.rs`: the grant is always recorded as `count:token` in the latch,
/// since the token exists only there), or Redisson's RFencedLock acquire when `redisson` (no
/// latch). Unlock and renewal are the RLock's scripts.
pub fn acquire(
    r: &mut Redis,
    owner: Owner,
    latch: ReqId,
    redisson: bool,
    ttl: i64,
    latch_ttl: i64,
) -> Acquired {
    if !redisson {
        if let Some(earlier) = recorded(r, latch) {
            return earlier;
        }
    }
    let field = Field::Holder(owner);
    if !r.exists(Key::Lock) || r.hget(Key::Lock, field).is_some() {
        let token = r.incr(Key::Token);
        let holds = r.hincrby(Key::Lock, field, 1);
        r.pexpire(Key::Lock, ttl);
        if !redisson {
            r.set_latch(latch, Latch::CountToken(holds, token), latch_ttl);
        }
        return Acquired::Granted {
            count: holds,
            token: Some(token),
        };
    }
    Acquired::Refused
}

/// The protected resource: one order row.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Resource {
    /// The highest token a holder claimed the row with (`orders.fence`).
    pub fence: i64,
    /// How many times the order was charged (at most once is the point).
    pub charged: u8,
}

/// What a holder has done with the row so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Work {
    /// The claim went through (`UPDATE ... SET fence = :token WHERE fence < :token`).
    pub claimed: bool,
    /// What the read saw: `Some(true)` = still pending.
    pub read_pending: Option<bool>,
    /// The write was tried (whether or not the row took it).
    pub wrote: bool,
}

impl Resource {
    /// The claim: raises the fence to `token` when it is below; whether it took.
    pub fn claim(&mut self, token: i64) -> bool {
        if self.fence < token {
            self.fence = token;
            true
        } else {
            false
        }
    }

    /// The write `... WHERE fence <= :token`, after a read that saw the order pending. With
    /// `write_only` (the [`Mutation::WriteOnlyFence`](crate::model::Mutation) mutant) there was
    /// no claim, and the write raises the fence itself.
    pub fn write(&mut self, token: i64, read_pending: bool, write_only: bool) {
        if read_pending && self.fence <= token {
            self.charged += 1;
            if write_only {
                self.fence = token;
            }
        }
    }
}
