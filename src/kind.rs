//! The seam between the machinery and the lock kinds (lock_api's lesson: a minimal raw trait,
//! capabilities as extension traits, one generic safe layer).
//!
//! A kind is sans-I/O: it names its hash field and channel, builds its requests
//! ([`redis::ScriptInvocation`]s of its own `lua/<kind>/` scripts), decodes its acquire reply,
//! maps its own error replies, and states how its waiters wait. The wait loop, the guard, the
//! lease, the hold table, the pub/sub hub and the watchdog are written once, over these traits,
//! and never ask which kind they serve.
//!
//! The traits and the types in their signatures are `pub` in a module the crate does not export:
//! the public generic types ([`Lock<K>`](crate::Lock), [`Guard<K>`](crate::Guard)) can be bounded
//! by them, while nobody outside the crate can name or implement them (a sealed seam).

use redis::{ScriptInvocation, Value};

use crate::error::{Error, Result};

/// What one script call needs to know about the lock it acts on.
pub struct Ctx<'a> {
    /// The lock's key.
    pub key: &'a str,
    /// The channel its unlock messages go to.
    pub channel: &'a str,
    /// The hash field of the owner acting.
    pub field: &'a str,
    /// `PUBLISH` or `SPUBLISH`.
    pub publish: &'static str,
}

impl Ctx<'_> {
    /// This client's wall clock, epoch ms (the fair lock's waiter deadlines are in it), read
    /// only by the kinds that send it.
    pub fn now_ms(&self) -> u64 {
        epoch_ms()
    }
}

/// This client's wall clock in epoch ms (Redisson's `System.currentTimeMillis()`).
pub(crate) fn epoch_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// The arguments of one acquisition attempt.
pub struct AcquireArgs<'a> {
    /// The TTL to give the key (the lease, or what the owner's longest hold needs).
    pub ttl_ms: u64,
    /// The attempt's latch key (records the grant: see `lua/common/resolve_acquire.lua`; an
    /// attempt settled through its owner's field marks it cancelled).
    pub latch: &'a str,
    /// The latch's TTL; 0 when the owner is new to the attempt and its field in the lock
    /// records the grant ([`AcquireKind::field_records_grant`]).
    pub latch_ms: u64,
    /// The kind's wait budget for this acquisition ([`WaitQueue::wait_budget`]).
    pub wait_ms: u64,
    /// Whether the caller will wait when refused, or tries once.
    pub waits: bool,
}

/// The arguments of one release.
pub struct ReleaseArgs<'a> {
    /// The TTL to re-apply after a partial release.
    pub ttl_ms: u64,
    /// The request's latch key (Redisson 3.24+: a retry replays the first reply).
    pub latch: &'a str,
    /// The latch's TTL.
    pub latch_ms: u64,
    /// Release every hold of the field (the client's last known one), not one.
    pub all: bool,
}

/// How holds are renewed, many in one call: what the watchdog sends for a batch of holds of one
/// renewal, and a guard's lease extension for its own hold. The lock hash's own renewal
/// (`HEXISTS key field` → `PEXPIRE key`) serves every kind that does not name another.
pub trait Renewal: Send + Sync + 'static {
    /// Its name, which tells renewals apart (holds of one renewal are batched together).
    fn name(&self) -> &'static str;
    /// The call that renews, to `ttl_ms` and never shorter, the holds of `locks` (each lock's
    /// key with the fields this client holds on it; all in one cluster slot). It replies one flag
    /// per field, in order: 1 renewed, 0 the field is gone (nothing is re-created), 2 the key
    /// holds another type. `track`: the call ends with one read of every lock key it extended,
    /// so that the server keeps tracking them for the connection it runs on (a write untracks
    /// a key when tracking is `NOLOOP`: see the loss watch).
    fn renew(&self, ttl_ms: u64, locks: &[(&str, Vec<&str>)], track: bool) -> ScriptInvocation<'static>;
    /// Appends to `pipe` the plain read (never a script: it must work where writes are refused)
    /// that tells the loss watch whether the hold `field` on `key` is still in Redis:
    /// `HEXISTS key field` unless the kind keeps its holds otherwise.
    fn presence(&self, pipe: &mut redis::Pipeline, key: &str, field: &str) {
        pipe.cmd("HEXISTS").arg(key).arg(field);
    }
    /// Reads the reply of [`presence`](Self::presence): whether the hold is there, `None` for a
    /// reply it does not expect.
    fn read_presence(&self, v: &Value) -> Option<bool> {
        match v {
            Value::Int(1) => Some(true),
            Value::Int(0) => Some(false),
            _ => None,
        }
    }
}

/// A decoded acquire reply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reply<G> {
    /// Granted; `count` = the field's hold count now; `grant` = what the kind's grant carries.
    Granted { count: i64, grant: G },
    /// Held by someone else; the key's PTTL (-1: no TTL).
    Refused { pttl: i64 },
    /// The attempt had been cancelled (settled as never granted): nothing was done.
    Cancelled,
}

/// How a waiter waits between attempts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wake {
    /// Subscribe to the kind's channel; re-try on each message and at least every poll interval.
    PubSub,
    /// No pub/sub: sleep with this back-off between attempts (Redisson's spin lock).
    Backoff(crate::BackOff),
}

/// A read-only request about a lock: a plain command or one of the kind's scripts.
pub enum Query {
    Cmd(redis::Cmd),
    Script(ScriptInvocation<'static>),
}

/// A lock kind: names, requests and replies of one Redisson lock type.
pub trait Kind: Send + Sync + 'static {
    /// A short name for logs and inspection ("lock", "read", "fenced", ...).
    fn label(&self) -> &'static str;
    /// What follows `<client id>:<owner>` in the hash field of an owner (e.g. `:write`).
    fn field_suffix(&self) -> &'static str {
        ""
    }
    /// Appends the channel waiters of `field` listen on (and unlocks publish to).
    fn write_channel(&self, out: &mut String, key: &str, field: &str);
    /// The channel waiters of `field` listen on.
    fn channel(&self, key: &str, field: &str) -> String {
        let mut s = String::new();
        self.write_channel(&mut s, key, field);
        s
    }
    /// Whether [`channel`](Self::channel) depends on the owner's field (the fair lock's
    /// per-waiter channels); otherwise the machinery does not build a field to name it.
    fn channel_per_owner(&self) -> bool {
        false
    }
    /// How waiters wait.
    fn wake(&self) -> Wake {
        Wake::PubSub
    }
    /// Release one hold (`all`: every hold of the field); replies nil (not held) / 0 (the owner
    /// still holds, or the lock lives on for others) / 1 (the owner's holds are gone).
    fn release(&self, c: &Ctx<'_>, a: &ReleaseArgs<'_>) -> ScriptInvocation<'static>;
    /// Delete the lock whoever holds it; replies 1 / 0.
    fn force_release(&self, c: &Ctx<'_>) -> ScriptInvocation<'static>;
    /// The renewal of the kind's holds, when it is not the lock hash's own.
    fn renewal(&self) -> Option<&'static dyn Renewal> {
        None
    }
    /// What tells whether the lock is held (Redisson's `isLocked()`): `EXISTS` of the key
    /// unless the kind says otherwise.
    fn is_locked(&self, key: &str) -> Query {
        let mut cmd = redis::cmd("EXISTS");
        cmd.arg(key);
        Query::Cmd(cmd)
    }
    /// Reads the reply of [`is_locked`](Self::is_locked): an integer 1 or 0 unless the kind says
    /// otherwise.
    fn read_is_locked(&self, v: &Value) -> Result<bool> {
        match v {
            Value::Int(n) => Ok(*n == 1),
            other => Err(Error::Protocol(format!("is_locked replied {other:?}"))),
        }
    }
    /// Whether an acquisition can only lengthen the key's TTL (it adds to it, or keeps the
    /// maximum). Otherwise (`PEXPIRE` to the new lease) the machinery sends the TTL the owner's
    /// longest live hold needs, so that a short re-entry never cuts it.
    fn ttl_only_grows(&self) -> bool {
        false
    }
    /// Turns an error reply of this kind's scripts into the crate's error.
    fn map_error(&self, _key: &str, _field: &str, e: Error) -> Error {
        e
    }
    /// The kind's wait queue, for a kind whose waiters keep a place in Redis.
    fn queue(&self) -> Option<&dyn WaitQueue> {
        None
    }
}

/// Capability: waiters keep a place in Redis while they wait (the fair lock's queue). The
/// machinery then keeps one owner through all the attempts of an acquisition (the owner's field
/// is its place), sends the waiter's budget with every attempt, and leaves the queue when the
/// wait ends without the lock (ran out, failed, or was cancelled).
pub trait WaitQueue: Send + Sync {
    /// What a waiter may spend waiting, in ms, sent with every attempt: `wait` is the caller's
    /// (`None`: without a limit, `Some(ZERO)`: one try).
    fn wait_budget(&self, wait: Option<std::time::Duration>, config: &crate::config::Config) -> u64;
    /// What a waiter that stops waiting without the lock must send to leave no trace (its queue
    /// entry); replies anything. `None` when it never queued (a single attempt).
    fn give_up(&self, c: &Ctx<'_>, a: &AcquireArgs<'_>) -> Option<ScriptInvocation<'static>>;
}

/// Runs `f` with the channel of `field` on `key`, written into a per-thread buffer: the channel
/// is only ever copied into a request or looked up, twice per lock + unlock, so it is neither
/// allocated nor kept (a held lock's guard would keep it for as long as the hold lives).
pub(crate) fn with_channel<R>(kind: &dyn Kind, key: &str, field: &str, f: impl FnOnce(&str) -> R) -> R {
    thread_local! {
        static BUF: std::cell::RefCell<String> = const { std::cell::RefCell::new(String::new()) };
    }
    BUF.with(|buf| match buf.try_borrow_mut() {
        Ok(mut b) => {
            b.clear();
            kind.write_channel(&mut b, key, field);
            f(&b)
        }
        // (`f` itself named a channel: not done today, but never panic for it)
        Err(_) => f(&kind.channel(key, field)),
    })
}

/// A kind that can be acquired: its request and the decoding of its reply.
pub trait AcquireKind: Kind {
    /// The kind itself (kinds are stateless): what a handle of the kind refers to.
    const INSTANCE: &'static Self;
    /// What a grant carries besides the hold count (the fenced lock's token; `()` elsewhere).
    type Grant: Copy + Send + Sync + std::fmt::Debug + 'static;
    /// One attempt that records its grant in `a.latch`. `c.channel` is empty: acquire scripts
    /// never publish, so the wait loop does not build it for them.
    fn acquire(&self, c: &Ctx<'_>, a: &AcquireArgs<'_>) -> ScriptInvocation<'static>;
    /// Decodes the reply of [`acquire`](Self::acquire), and of `resolve_acquire.lua` for it.
    fn decode(&self, v: &Value) -> Result<Reply<Self::Grant>>;
    /// The fencing token a grant carries, for the kinds that hand one out.
    fn fencing_token(_grant: &Self::Grant) -> Option<u64> {
        None
    }
    /// Whether the owner's field in the lock hash, holding its count, is all a grant is: then
    /// an attempt whose owner is new to it records nothing else (its latch TTL argument is 0,
    /// see `lua/common/attempt.lua`) and is settled by reading the field
    /// (`lua/common/resolve_by_field.lua`). Not for a kind whose grant carries more (the fenced
    /// lock's token lives only in its latch).
    fn field_records_grant(&self) -> bool {
        true
    }
}

/// Capability: the same owner may hold the kind more than once (re-entry): what
/// [`Guard::reenter`](crate::Guard::reenter) needs.
pub trait Reenterable: AcquireKind {}

/// Decodes the common acquire reply shape `{1, count[, x]}` / `{0, pttl}` / `{2, 0}`; the third
/// element of a grant, if any, is returned as the grant's extra value.
pub(crate) fn decode_reply(v: &Value) -> Result<Reply<Option<i64>>> {
    let bad = || Error::Protocol(format!("acquire replied {v:?}"));
    let Value::Array(items) = v else {
        return Err(bad());
    };
    // at most three integers: read onto the stack, no allocation; the third (a fencing token)
    // may come as the decimal text Redis stores, exact where a Lua number is not
    if items.len() > 3 {
        return Err(bad());
    }
    let mut buf = [0i64; 3];
    for (i, (slot, x)) in buf.iter_mut().zip(items).enumerate() {
        match x {
            Value::Int(n) => *slot = *n,
            Value::BulkString(text) if i == 2 => {
                *slot = std::str::from_utf8(text)
                    .ok()
                    .and_then(|t| t.parse::<i64>().ok())
                    .ok_or_else(bad)?
            }
            _ => return Err(bad()),
        }
    }
    let ints = &buf[..items.len()];
    match ints {
        [1, count] if *count >= 1 => Ok(Reply::Granted {
            count: *count,
            grant: None,
        }),
        [1, count, extra] if *count >= 1 => Ok(Reply::Granted {
            count: *count,
            grant: Some(*extra),
        }),
        [0, pttl] => Ok(Reply::Refused { pttl: *pttl }),
        [2, _] => Ok(Reply::Cancelled),
        _ => Err(bad()),
    }
}

/// The decoder of kinds whose grant carries nothing.
pub(crate) fn decode_plain(v: &Value) -> Result<Reply<()>> {
    Ok(match decode_reply(v)? {
        Reply::Granted { count, grant: None } => Reply::Granted { count, grant: () },
        Reply::Granted { .. } => return Err(Error::Protocol(format!("acquire replied {v:?}"))),
        Reply::Refused { pttl } => Reply::Refused { pttl },
        Reply::Cancelled => Reply::Cancelled,
    })
}

/// Argument layouts shared by several kinds (each with its own script).
pub(crate) mod layout {
    use redis::{Script, ScriptInvocation};

    use super::{AcquireArgs, Ctx, ReleaseArgs};

    /// `KEYS` lock, attempt latch; `ARGV` TTL, field, latch TTL: the RLock-shaped acquire.
    pub(crate) fn acquire(
        script: &'static Script,
        c: &Ctx<'_>,
        a: &AcquireArgs<'_>,
    ) -> ScriptInvocation<'static> {
        let mut inv = script.prepare_invoke();
        inv.key(c.key)
            .key(a.latch)
            .arg(a.ttl_ms)
            .arg(c.field)
            .arg(a.latch_ms);
        inv
    }

    /// `KEYS` lock, channel, latch; `ARGV` message, TTL, field, publish command, latch TTL,
    /// release-all flag: the RLock-shaped unlock (Redisson 3.24+ plus the flag).
    pub(crate) fn release(
        script: &'static Script,
        c: &Ctx<'_>,
        message: u8,
        a: &ReleaseArgs<'_>,
    ) -> ScriptInvocation<'static> {
        let mut inv = script.prepare_invoke();
        inv.key(c.key)
            .key(c.channel)
            .key(a.latch)
            .arg(message)
            .arg(a.ttl_ms)
            .arg(c.field)
            .arg(c.publish)
            .arg(a.latch_ms)
            .arg(u8::from(a.all));
        inv
    }

    /// `KEYS` lock, channel; `ARGV` message, publish command: the force unlock that publishes.
    pub(crate) fn force(script: &'static Script, c: &Ctx<'_>, message: u8) -> ScriptInvocation<'static> {
        let mut inv = script.prepare_invoke();
        inv.key(c.key).key(c.channel).arg(message).arg(c.publish);
        inv
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arr(v: &[i64]) -> Value {
        Value::Array(v.iter().map(|n| Value::Int(*n)).collect())
    }

    #[test]
    fn replies_decode() {
        assert_eq!(
            decode_plain(&arr(&[1, 2])).unwrap(),
            Reply::Granted { count: 2, grant: () }
        );
        assert_eq!(decode_plain(&arr(&[0, -1])).unwrap(), Reply::Refused { pttl: -1 });
        assert_eq!(decode_plain(&arr(&[2, 0])).unwrap(), Reply::Cancelled);
        assert_eq!(
            decode_reply(&arr(&[1, 1, 7])).unwrap(),
            Reply::Granted {
                count: 1,
                grant: Some(7)
            }
        );
        assert!(
            decode_plain(&arr(&[1, 1, 7])).is_err(),
            "a plain kind's grant carries nothing"
        );
        assert!(decode_plain(&arr(&[1, 0])).is_err(), "a grant has a count");
        assert!(decode_plain(&Value::Nil).is_err());
        assert!(decode_plain(&Value::Int(5)).is_err());
        assert!(decode_reply(&arr(&[1, 1, 7, 8])).is_err(), "too many items");
        assert!(decode_reply(&arr(&[])).is_err());
        assert!(decode_reply(&arr(&[1])).is_err());
        assert!(
            decode_reply(&Value::Array(vec![Value::Int(1), Value::Nil])).is_err(),
            "a non-integer item"
        );
    }
}
