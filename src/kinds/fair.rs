//! Redisson's fair lock (`RFairLock`) and its non-reentrant variant (4.4+): the RLock's hash plus
//! a FIFO queue of waiters with deadlines; only the head waiter is woken, on its own channel
//! (`lua/fair/`).

use redis::{ScriptInvocation, Value};

use crate::error::{Error, Result};
use crate::kind::{
    decode_plain, AcquireArgs, AcquireKind, Ctx, Kind, Reenterable, ReleaseArgs, Reply, WaitQueue,
};
use crate::layout::{ChannelSpec, KeySpec, Layout};
use crate::name;
use crate::script::{self, lua};

use super::common;

/// Redisson's fair locks: the fair (first come, first served) reentrant lock (`RFairLock`,
/// `getFairLock(name)`) as [`Fair`] — [`RFairLock`](crate::RFairLock) is `Lock<Fair>` — and the
/// non-reentrant fair lock (`getNonReentrantFairLock(name)`, Redisson 4.4+) as
/// [`NonReentrantFair`] — [`RNonReentrantFairLock`](crate::RNonReentrantFairLock): the same
/// queue and wake-up, and an owner's second acquisition is
/// [`Error::AlreadyHeld`](crate::Error::AlreadyHeld) (its guards have no `reenter`).
///
/// Redis state: the [`RLock`](crate::RLock)'s hash, plus the list `redisson_lock_queue:{<key>}` of
/// waiting owner fields (head first) and the sorted set `redisson_lock_timeout:{<key>}` of their
/// deadlines (client wall-clock epoch ms). A waiter queues up behind the last one with the
/// deadline "predecessor's deadline + its wait"; the lock goes to the head; an unlock wakes only
/// the head, on its own channel `redisson_lock__channel:{<key>}:<field>`. A waiter that stops
/// waiting — its wait ran out, an error, **or its future was dropped** — leaves the queue at once,
/// so it never holds up those behind it; a crashed waiter is skipped once its deadline passes.
/// Java and Rust waiters share one queue, in arrival order.
///
/// **Clocks:** deadlines are compared with each client's own wall clock, as in Redisson, so the
/// clocks of every client (Java and Rust) must agree (NTP): a client whose clock runs ahead
/// purges waiters early, one behind keeps dead waiters longer. `redisson-lock inspect` shows each
/// waiter's deadline against Redis' `TIME`.
///
/// ```no_run
/// # async fn demo(client: redisson_lock::Client) -> redisson_lock::Result<()> {
/// let lock = client.fair_lock("lock:queue")?;
/// let guard = lock.lock().await?;        // in arrival order
/// guard.unlock().await?;                 // wakes the next in line only
/// # Ok(()) }
/// ```
pub struct FairKind<const NON_REENTRANT: bool> {
    _sealed: (),
}

/// Redisson's fair lock (`RFairLock`): see [`FairKind`].
pub type Fair = FairKind<false>;

/// Redisson's non-reentrant fair lock (4.4+): see [`FairKind`].
pub type NonReentrantFair = FairKind<true>;

impl<const NON_REENTRANT: bool> Kind for FairKind<NON_REENTRANT> {
    fn label(&self) -> &'static str {
        if NON_REENTRANT {
            "non-reentrant fair"
        } else {
            "fair"
        }
    }

    /// Each waiter listens on `redisson_lock__channel:{N}:<its field>`; unlocks wake the head only.
    fn write_channel(&self, out: &mut String, key: &str, field: &str) {
        name::push_lock_channel(out, key);
        out.push(':');
        out.push_str(field);
    }

    fn channel_per_owner(&self) -> bool {
        true
    }

    fn release(&self, c: &Ctx<'_>, a: &ReleaseArgs<'_>) -> ScriptInvocation<'static> {
        let mut inv = FAIR_UNLOCK.prepare_invoke();
        inv.key(c.key)
            .key(name::fair_queue(c.key))
            .key(name::fair_deadlines(c.key))
            .key(name::lock_channel(c.key))
            .key(a.latch)
            .arg(0)
            .arg(a.ttl_ms)
            .arg(c.field)
            .arg(c.now_ms())
            .arg(c.publish)
            .arg(a.latch_ms)
            .arg(u8::from(a.all));
        inv
    }

    fn force_release(&self, c: &Ctx<'_>) -> ScriptInvocation<'static> {
        let mut inv = FAIR_FORCE_UNLOCK.prepare_invoke();
        inv.key(c.key)
            .key(name::fair_queue(c.key))
            .key(name::fair_deadlines(c.key))
            .key(name::lock_channel(c.key))
            .arg(0)
            .arg(c.now_ms())
            .arg(c.publish);
        inv
    }

    fn map_error(&self, key: &str, field: &str, e: Error) -> Error {
        common::already_held(key, field, e)
    }

    /// Waiters queue up: one owner (its place) through all the attempts of an acquisition.
    fn queue(&self) -> Option<&dyn WaitQueue> {
        Some(self)
    }
}

impl<const NON_REENTRANT: bool> WaitQueue for FairKind<NON_REENTRANT> {
    /// A waiter's place in the queue lasts the caller's wait, or Redisson's `fairLockWaitTimeout`
    /// ([`Config::with_fair_lock_wait_timeout`](crate::Config::with_fair_lock_wait_timeout)) when it waits
    /// without a limit or tries once.
    fn wait_budget(&self, wait: Option<std::time::Duration>, config: &crate::config::Config) -> u64 {
        match wait {
            Some(w) if !w.is_zero() => w.as_millis().clamp(1, u128::from(crate::config::MAX_MS)) as u64,
            _ => config.fair_lock_wait_timeout.as_millis() as u64,
        }
    }

    /// A waiter that stops waiting leaves the queue (Redisson's `acquireFailed`).
    fn give_up(&self, c: &Ctx<'_>, a: &AcquireArgs<'_>) -> Option<ScriptInvocation<'static>> {
        if !a.waits {
            return None; // a single attempt never queued
        }
        let mut inv = FAIR_GIVE_UP.prepare_invoke();
        inv.key(name::fair_queue(c.key))
            .key(name::fair_deadlines(c.key))
            .arg(c.field)
            .arg(a.wait_ms);
        Some(inv)
    }
}

impl<const NON_REENTRANT: bool> AcquireKind for FairKind<NON_REENTRANT> {
    const INSTANCE: &'static Self = &FairKind { _sealed: () };

    type Grant = ();

    fn acquire(&self, c: &Ctx<'_>, a: &AcquireArgs<'_>) -> ScriptInvocation<'static> {
        let mut inv = FAIR_ACQUIRE.prepare_invoke();
        inv.key(c.key)
            .key(name::fair_queue(c.key))
            .key(name::fair_deadlines(c.key))
            .key(a.latch)
            .arg(a.ttl_ms)
            .arg(c.field)
            .arg(a.wait_ms)
            .arg(c.now_ms())
            .arg(a.latch_ms)
            .arg(u8::from(a.waits))
            .arg(u8::from(NON_REENTRANT));
        inv
    }

    fn decode(&self, v: &Value) -> Result<Reply<()>> {
        decode_plain(v)
    }
}

impl Reenterable for Fair {}

lua!(FAIR_ACQUIRE, "fair/acquire", with "fair/purge", "common/attempt");
lua!(FAIR_UNLOCK, "fair/unlock", with "fair/purge", "common/notify");
lua!(FAIR_FORCE_UNLOCK, "fair/force_unlock", with "common/lock_shape", "fair/purge", "common/notify");
lua!(FAIR_GIVE_UP, "fair/give_up");

fn queue_key(key: &str, _: &str) -> String {
    name::fair_queue(key)
}

fn deadlines_key(key: &str, _: &str) -> String {
    name::fair_deadlines(key)
}

fn waiter_channel(key: &str, field: &str) -> String {
    Fair::INSTANCE.channel(key, field)
}

const FAIR_KEYS: &[KeySpec] = &[
    KeySpec::new(
        "lock",
        common::lock_key,
        Some("hash"),
        false,
        &[
            "del", "exists", "hexists", "hget", "hgetall", "hincrby", "hlen", "hscan", "hset", "pexpire",
            "pttl", "type",
        ],
    )
    .with_client_commands(common::LOCK_READS),
    KeySpec::new(
        "wait queue",
        queue_key,
        Some("list"),
        false,
        &["exists", "lindex", "lpop", "lrange", "lrem", "rpush"],
    ),
    KeySpec::new(
        "waiter deadlines",
        deadlines_key,
        Some("zset"),
        false,
        &["zadd", "zincrby", "zrange", "zrem", "zscore"],
    ),
    common::LOCK_CHANNEL_KEY,
    common::LATCH,
];

/// Waiters listen on their own channel, and unlocks publish to the head waiter's (the scripts
/// get the base, the RLock's channel, as a key).
const FAIR_CHANNELS: &[ChannelSpec] = &[ChannelSpec::new("waiter channel", waiter_channel, true)];

const FAIR_SCRIPTS: &[&script::Lua] = &[
    &FAIR_ACQUIRE,
    &FAIR_UNLOCK,
    &FAIR_FORCE_UNLOCK,
    &FAIR_GIVE_UP,
    &script::LOCK_RENEW_BATCH,
    &script::RESOLVE_ACQUIRE,
    &script::RESOLVE_BY_FIELD,
    &script::MISSING,
];

pub(crate) static LAYOUT: Layout = Layout::new("fair", "getFairLock", FAIR_KEYS, FAIR_CHANNELS, FAIR_SCRIPTS);

pub(crate) static NON_REENTRANT_LAYOUT: Layout = Layout::new(
    "non-reentrant fair",
    "getNonReentrantFairLock",
    FAIR_KEYS,
    FAIR_CHANNELS,
    FAIR_SCRIPTS,
);

impl<const NON_REENTRANT: bool> super::KindLayout for FairKind<NON_REENTRANT> {
    const LAYOUT: &'static Layout = if NON_REENTRANT {
        &NON_REENTRANT_LAYOUT
    } else {
        &LAYOUT
    };
    const FAMILY: super::Family = super::Family::Fair;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds() {
        fn assert_send_sync_static<T: Send + Sync + 'static>() {}
        assert_send_sync_static::<crate::FairGuard>();
        assert_send_sync_static::<crate::RFairLock>();
        assert_send_sync_static::<crate::NonReentrantFairGuard>();
    }

    #[test]
    fn each_waiter_has_its_own_channel() {
        assert_eq!(
            Fair::INSTANCE.channel("q", "id:7"),
            "redisson_lock__channel:{q}:id:7"
        );
        assert!(Fair::INSTANCE.queue().is_some());
    }
}
