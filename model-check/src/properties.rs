//! The promises, as stateright properties: `always` for safety, `sometimes` for the states that
//! must be reachable (so that a passing check is not vacuous).

use stateright::Property;

use crate::client::{Flavor, Status};
use crate::model::{seen, Kind, ProtocolModel, State};
use crate::network::conflict;
use crate::redis::Key;

/// (1) No two clients trust conflicting holds at the same instant unless a data-loss event came
/// between their proofs (their epochs differ).
pub const MUTUAL_EXCLUSION: &str = "mutual exclusion (unless a data loss came between)";
/// (1) After a data loss, a holder whose proof is older trusts no longer than what a proof sent
/// before the loss covers (one TTL after it): it extends its trust only with a new proof, a
/// renewal that found its field, and otherwise learns the loss (signal, failed renewal, expiry).
pub const LOSS_BOUNDS_TRUST: &str = "a data loss never extends an old holder's trust";
/// (2) The lock never lives longer than one TTL from now, and a lock with no live owner and
/// nothing in flight expires within one TTL of becoming so.
pub const NO_ORPHAN: &str = "no hold outlives every live owner past its TTL";
/// (3) For the crate's clients with nothing in flight, in the data epoch of their hold: one that
/// trusts its hold has at least as many holds in the lock as guards (no guard's hold was taken
/// away by another's release), and one that released its last guard left no hold behind (no hold
/// counted twice). More holds than guards while held are counts of an epoch the client knows it
/// lost (a re-entry granted after the window passed), which its last release clears.
pub const ONE_GUARD_ONE_HOLD: &str = "one guard = one hold";
/// (4) An unlock request id changes the lock at most once, whatever the retries.
pub const UNLOCK_ONCE: &str = "an unlock is applied at most once";
/// (5) A fresh owner's acquisition whose caller gave up leaves no field once the client has
/// nothing in flight.
pub const LATE_GRANT_RELEASED: &str = "a grant found after its caller gave up is released";
/// (6) The tokens clients trust strictly increase within a data-loss epoch (both languages).
pub const TOKENS_INCREASE: &str = "fencing tokens strictly increase";
/// (6) The resource that claims with the token is charged at most once.
pub const STALE_TOKEN_REFUSED: &str = "the resource refuses a stale token (charged once)";
/// (7) A fair grant never skips a live waiter ahead of it in the queue.
pub const FAIR_NO_SKIP: &str = "a fair queue never skips a live waiter";
/// (7) A free fair lock is never refused because of a head whose deadline passed.
pub const FAIR_NO_DEAD_HEAD: &str = "a fair queue keeps no dead waiter past its deadline";

fn mutual_exclusion(_: &ProtocolModel, s: &State) -> bool {
    let now = s.redis.now;
    let t: Vec<_> = s.clients.iter().filter(|c| c.trusts(now)).collect();
    t.iter().enumerate().all(|(i, a)| {
        t[i + 1..]
            .iter()
            .all(|b| a.epoch != b.epoch || !conflict(a.spec.role, b.spec.role))
    })
}

fn loss_bounds_trust(m: &ProtocolModel, s: &State) -> bool {
    let now = s.redis.now;
    s.clients.iter().all(|c| {
        !c.trusts(now)
            || c.epoch == s.redis.epoch
            || s.ghost
                .loss_at
                .get(usize::from(c.epoch))
                .is_some_and(|t| c.trusted_until <= t + m.cfg.ttl)
    })
}

fn no_orphan(m: &ProtocolModel, s: &State) -> bool {
    let ttl = i64::from(m.cfg.ttl);
    let pttl = s.redis.pttl(Key::Lock);
    if pttl == -2 {
        return true;
    }
    let within = pttl > 0 && pttl <= ttl;
    let orphan_ok = s
        .ghost
        .orphan_since
        .is_none_or(|t| i64::from(s.redis.now) + pttl <= i64::from(t) + ttl);
    within && orphan_ok
}

fn one_guard_one_hold(_: &ProtocolModel, s: &State) -> bool {
    let now = s.redis.now;
    s.clients.iter().enumerate().all(|(i, c)| {
        if !c.ours() || c.status == Status::Crashed || c.epoch != s.redis.epoch || !s.quiet(i as u8) {
            return true;
        }
        let count = s.count_of(c).unwrap_or(0);
        if c.trusts(now) {
            count >= i64::from(c.guards)
        } else {
            !(c.guards == 0 && c.released) || count == 0
        }
    })
}

fn late_grant_released(_: &ProtocolModel, s: &State) -> bool {
    s.clients.iter().enumerate().all(|(i, c)| {
        let Some((owner, epoch)) = c.gave_up else {
            return true;
        };
        // a data loss may bring back a field that was released (a stale replica)
        epoch != s.redis.epoch
            || c.spec.flavor != Flavor::Fresh
            || c.status == Status::Crashed
            || c.owner != owner
            || c.guards > 0
            || !s.quiet(i as u8)
            || s.count_of(c).is_none()
    })
}

/// The `sometimes` properties that need a data-loss event.
pub const NEEDS_DATA_LOSS: &[&str] = &[
    "reachable: a data loss",
    "reachable: two holders after a data loss",
];

/// Whether a `sometimes` property can be reached under `cfg`'s bounds at all.
pub fn applies(cfg: &crate::model::Config, name: &str) -> bool {
    cfg.losses > 0 || !NEEDS_DATA_LOSS.contains(&name)
}

/// Every property of a model of `kind` (the fenced and fair ones only where they apply).
pub fn all() -> Vec<Property<ProtocolModel>> {
    vec![
        Property::always(MUTUAL_EXCLUSION, mutual_exclusion),
        Property::always(LOSS_BOUNDS_TRUST, loss_bounds_trust),
        Property::always(NO_ORPHAN, no_orphan),
        Property::always(ONE_GUARD_ONE_HOLD, one_guard_one_hold),
        Property::always(UNLOCK_ONCE, |_, s: &State| !s.ghost.unlock_twice),
        Property::always(LATE_GRANT_RELEASED, late_grant_released),
        Property::always(TOKENS_INCREASE, |_, s: &State| !s.ghost.token_regressed),
        Property::always(STALE_TOKEN_REFUSED, |_, s: &State| s.resource.charged <= 1),
        Property::always(FAIR_NO_SKIP, |_, s: &State| !s.ghost.skipped_live),
        Property::always(FAIR_NO_DEAD_HEAD, |_, s: &State| !s.ghost.dead_head_blocked),
        Property::sometimes("reachable: a lock acquired", |_, s: &State| {
            s.ghost.seen & seen::ACQUIRED != 0
        }),
        Property::sometimes("reachable: a reply lost", |_, s: &State| {
            s.ghost.seen & seen::REPLY_LOST != 0
        }),
        Property::sometimes("reachable: a late grant released", |_, s: &State| {
            s.ghost.seen & seen::LATE_GRANT != 0
        }),
        Property::sometimes("reachable: a settle keeps a grant", |_, s: &State| {
            s.ghost.seen & seen::SETTLED_GRANT != 0
        }),
        Property::sometimes("reachable: a data loss", |_, s: &State| {
            s.ghost.seen & seen::DATA_LOSS != 0
        }),
        Property::sometimes("reachable: two holders after a data loss", |_, s: &State| {
            s.ghost.seen & seen::OVERLAP_AFTER_LOSS != 0
        }),
        Property::sometimes("reachable: an unlock retry replays its latch", |_, s: &State| {
            s.ghost.seen & seen::LATCH_REPLAY != 0
        }),
        Property::sometimes("reachable: a renewal read late keeps the hold", |_, s: &State| {
            s.ghost.seen & seen::LATE_RENEWAL != 0
        }),
        Property::sometimes("reachable: the loss signal", |_, s: &State| {
            s.ghost.seen & seen::SIGNALLED != 0
        }),
        Property::sometimes("reachable: a settled attempt's late copy", |_, s: &State| {
            s.ghost.seen & seen::LATE_COPY != 0
        }),
        Property::sometimes("reachable: a lock expired unreleased", |_, s: &State| {
            s.ghost.seen & seen::EXPIRED != 0
        }),
        Property::sometimes(
            "reachable: a fair waiter queued",
            |m: &ProtocolModel, s: &State| m.cfg.kind != Kind::Fair || s.ghost.seen & seen::QUEUED != 0,
        ),
        Property::sometimes(
            "reachable: a stale token refused",
            |m: &ProtocolModel, s: &State| {
                m.cfg.kind != Kind::Fenced || s.ghost.seen & seen::STALE_REFUSED != 0
            },
        ),
    ]
}
