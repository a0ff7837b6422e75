//! Redisson's fenced lock (`RFencedLock`, 3.19+): the RLock plus a fencing token taken by every
//! acquisition (`lua/fenced/`; unlock, force unlock and channel are the RLock's `lua/lock/`).

use std::time::Duration;

use redis::{ScriptInvocation, Value};

use crate::core::{Guard, Lock};
use crate::error::{Error, Result};
use crate::kind::{decode_reply, AcquireArgs, AcquireKind, Ctx, Kind, Reenterable, Reply};
use crate::layout::{KeySpec, Layout};
use crate::name;
use crate::script::{self, lua};

use super::common;
use super::reentrant::{LOCK_FORCE_UNLOCK, LOCK_UNLOCK};

/// Redisson's fenced lock (`RFencedLock`, `getFencedLock(name)`, Redisson 3.19+): a reentrant
/// lock that hands out **fencing tokens**; [`RFencedLock`](crate::RFencedLock) is `Lock<Fenced>`.
///
/// Redis state: the [`RLock`](crate::RLock)'s hash, TTL, channel and unlock, plus the counter
/// `redisson_lock_token:{<key>}` (a string integer, no TTL). Every acquisition — a re-entry too —
/// increments it and gets the new value as its token, so tokens strictly increase per lock name,
/// across Java and Rust holders, while Redis keeps its data. Tokens are exact over the counter's
/// whole range, up to `i64::MAX`: the scripts handle them as the strings Redis stores, never as
/// Lua numbers (exact only up to 2^53). A counter that is negative (set by hand) or at
/// `i64::MAX` has no next token: an acquisition is then [`Error::OutOfRange`] and changes
/// nothing.
///
/// # What a token is for
///
/// A lock can end without its holder noticing in time: a GC or VM pause longer than the lease, a
/// network partition, a Redis failover that lost the lock. The holder then writes to the protected
/// resource *after* someone else took the lock. Fencing stops that at the resource: pass the
/// token to the resource, and have it reject a token lower than the highest it has seen. With
/// SQL, the row keeping the highest token it has seen (`fence`):
///
/// ```sql
/// -- first, before reading the row: claim it (0 rows: a newer holder came; stop)
/// UPDATE orders SET fence = $token WHERE id = $id AND fence < $token;
/// -- the write, checked in its own statement (0 rows: a newer holder claimed it since)
/// UPDATE orders SET state = 'paid', fence = $token WHERE id = $id AND fence <= $token;
/// ```
///
/// Claim before reading: checked only at write time, a stale holder that writes *before* the new
/// holder's first statement looks current to the resource, and the new holder, having read the
/// old state, writes again.
///
/// ```no_run
/// # async fn demo(client: redisson_lock::Client) -> redisson_lock::Result<()> {
/// let lock = client.fenced_lock("lock:order:42")?;
/// let (token, guard) = lock.lock_and_get_token().await?;
/// // UPDATE orders SET fence = token WHERE id = 42 AND fence < token, then read, then
/// // UPDATE orders SET ..., fence = token WHERE id = 42 AND fence <= token
/// # let _ = token;
/// guard.unlock().await?;
/// # Ok(()) }
/// ```
///
/// Tokens only increase while Redis keeps its data: a failover to a replica that missed the last
/// `INCR`, or a restart without persistence, can hand out a token again (Redisson's too). Run
/// fenced locks on a Redis that persists (AOF) and replicates synchronously enough for your
/// needs, and keep the resource's check strict (`fence < token`), so that of two holders with an
/// equal token only the first claim wins. A counter that went back leaves the resource safe but
/// stuck: it refuses every new holder until the tokens pass its highest fence again, or
/// [`raise_token_to`](crate::Lock::raise_token_to) lifts the counter past that fence.
///
/// `examples/fenced_write/` runs the whole pattern against SQLite: a holder paused past its
/// lease, the next holder's write, and the database refusing the stale one.
pub struct Fenced {
    _sealed: (),
}

impl Kind for Fenced {
    fn label(&self) -> &'static str {
        "fenced"
    }

    super::rlock_release!();
}

impl AcquireKind for Fenced {
    const INSTANCE: &'static Self = &Fenced { _sealed: () };

    /// The fencing token this grant took.
    type Grant = u64;

    /// The token lives only in the attempt's latch: every attempt records its grant there.
    fn field_records_grant(&self) -> bool {
        false
    }

    fn acquire(&self, c: &Ctx<'_>, a: &AcquireArgs<'_>) -> ScriptInvocation<'static> {
        let mut inv = FENCED_ACQUIRE.prepare_invoke();
        inv.key(c.key)
            .key(name::token_key(c.key))
            .key(a.latch)
            .arg(a.ttl_ms)
            .arg(c.field)
            .arg(a.latch_ms);
        inv
    }

    fn fencing_token(grant: &u64) -> Option<u64> {
        Some(*grant)
    }

    fn decode(&self, v: &Value) -> Result<Reply<u64>> {
        Ok(match decode_reply(v)? {
            Reply::Granted {
                count,
                grant: Some(token),
            } if token >= 1 => Reply::Granted {
                count,
                grant: token as u64,
            },
            Reply::Granted { .. } => {
                return Err(Error::Protocol(format!("a fenced grant without a token: {v:?}")))
            }
            Reply::Refused { pttl } => Reply::Refused { pttl },
            Reply::Cancelled => Reply::Cancelled,
        })
    }
}

impl Reenterable for Fenced {}

lua!(FENCED_ACQUIRE, "fenced/acquire", with "fenced/token");
lua!(FENCED_RAISE_TOKEN, "fenced/raise_token", with "fenced/token");

/// The highest floor [`raise_token_to`](crate::Lock::raise_token_to) accepts: one below
/// `i64::MAX`, the most Redis' `INCR` reaches, so that a next token exists.
const MAX_TOKEN_FLOOR: u64 = i64::MAX as u64 - 1;

/// The commands the fenced lock's scripts run on its hash: the RLock's, without the `HGET` of
/// settling through an owner's field (its grants are always settled through their latch).
const FENCED_HASH_COMMANDS: &[&str] = &[
    "del", "exists", "hexists", "hgetall", "hincrby", "hlen", "hscan", "pexpire", "pttl", "type",
];

fn token_key(key: &str, _: &str) -> String {
    name::token_key(key)
}

pub(crate) static LAYOUT: Layout = Layout::new(
    "fenced",
    "getFencedLock",
    &[
        KeySpec::new(
            "lock",
            common::lock_key,
            Some("hash"),
            false,
            FENCED_HASH_COMMANDS,
        )
        .with_client_commands(common::LOCK_READS),
        KeySpec::new(
            "fencing token",
            token_key,
            Some("string"),
            false,
            &["get", "incr", "set"],
        )
        .with_client_commands(&["get"]),
        common::LOCK_CHANNEL_KEY,
        common::LATCH,
    ],
    &[common::LOCK_CHANNEL],
    &[
        &FENCED_ACQUIRE,
        &FENCED_RAISE_TOKEN,
        &LOCK_UNLOCK,
        &LOCK_FORCE_UNLOCK,
        &script::LOCK_RENEW_BATCH,
        &script::RESOLVE_ACQUIRE,
        &script::MISSING,
    ],
);

impl Lock<Fenced> {
    /// Acquires the lock (waiting as long as it takes, watchdog mode) and returns its token with
    /// the guard (Redisson `lockAndGetToken()`).
    ///
    /// # Cancel safety
    ///
    /// As for [`lock`](Self::lock).
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RFencedLock) -> redisson_lock::Result<()> {
    /// let (token, guard) = lock.lock_and_get_token().await?;
    /// assert_eq!(token, guard.token());
    /// # Ok(()) }
    /// ```
    pub async fn lock_and_get_token(&self) -> Result<(u64, Guard<Fenced>)> {
        let g = self.lock().await?;
        Ok((g.token(), g))
    }

    /// [`lock_with_lease`](Self::lock_with_lease), returning the token with the guard (Redisson
    /// `lockAndGetToken(leaseTime, unit)`).
    ///
    /// # Cancel safety
    ///
    /// As for [`lock`](Self::lock).
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RFencedLock) -> redisson_lock::Result<()> {
    /// use std::time::Duration;
    /// let (token, guard) = lock.lock_with_lease_and_get_token(Duration::from_secs(10)).await?;
    /// # let _ = token; guard.unlock().await?;
    /// # Ok(()) }
    /// ```
    pub async fn lock_with_lease_and_get_token(&self, lease: Duration) -> Result<(u64, Guard<Fenced>)> {
        let g = self.lock_with_lease(lease).await?;
        Ok((g.token(), g))
    }

    /// [`try_lock`](Self::try_lock) (one attempt), returning the token with the guard (Redisson
    /// `tryLockAndGetToken()`). A refused attempt takes no token.
    ///
    /// # Cancel safety
    ///
    /// As for [`lock`](Self::lock).
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RFencedLock) -> redisson_lock::Result<()> {
    /// if let Some((token, guard)) = lock.try_lock_and_get_token().await? {
    ///     # let _ = token; guard.unlock().await?;
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn try_lock_and_get_token(&self) -> Result<Option<(u64, Guard<Fenced>)>> {
        Ok(self.try_lock().await?.map(|g| (g.token(), g)))
    }

    /// [`try_lock_for`](Self::try_lock_for), returning the token with the guard (Redisson
    /// `tryLockAndGetToken(waitTime, unit)`). A refused attempt takes no token.
    ///
    /// # Cancel safety
    ///
    /// As for [`lock`](Self::lock).
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RFencedLock) -> redisson_lock::Result<()> {
    /// use std::time::Duration;
    /// if let Some((token, guard)) = lock.try_lock_for_and_get_token(Duration::from_secs(1)).await? {
    ///     # let _ = token; guard.unlock().await?;
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn try_lock_for_and_get_token(&self, wait: Duration) -> Result<Option<(u64, Guard<Fenced>)>> {
        Ok(self.try_lock_for(wait).await?.map(|g| (g.token(), g)))
    }

    /// [`try_lock_with_lease`](Self::try_lock_with_lease), returning the token with the guard
    /// (Redisson `tryLockAndGetToken(waitTime, leaseTime, unit)`). A refused attempt takes no
    /// token.
    ///
    /// # Cancel safety
    ///
    /// As for [`lock`](Self::lock).
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RFencedLock) -> redisson_lock::Result<()> {
    /// use std::time::Duration;
    /// let got = lock
    ///     .try_lock_with_lease_and_get_token(Duration::from_secs(1), Duration::from_secs(10))
    ///     .await?;
    /// # drop(got);
    /// # Ok(()) }
    /// ```
    pub async fn try_lock_with_lease_and_get_token(
        &self,
        wait: Duration,
        lease: Duration,
    ) -> Result<Option<(u64, Guard<Fenced>)>> {
        Ok(self
            .try_lock_with_lease(wait, lease)
            .await?
            .map(|g| (g.token(), g)))
    }

    /// The last token handed out for this lock (Redisson `getToken()`: `GET
    /// redisson_lock_token:{<key>}`); `None` before the first acquisition.
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RFencedLock) -> redisson_lock::Result<()> {
    /// println!("{:?}", lock.get_token().await?);
    /// # Ok(()) }
    /// ```
    pub async fn get_token(&self) -> Result<Option<u64>> {
        self.query(redis::cmd("GET").arg(name::token_key(&self.key)))
            .await
    }

    /// Raises the token counter `redisson_lock_token:{<key>}` to at least `floor` and returns
    /// its value afterwards; it never lowers it (a counter at or above `floor` stays as it is).
    /// Every later acquisition, Java's too, then takes a token above `floor`.
    ///
    /// The recovery after the counter went back — Redis restarted without persistence, or failed
    /// over to a replica that had not seen the last increments: tokens start again below the
    /// highest fence the protected resource stored, so a resource that checks `fence < token`
    /// refuses every new holder (safe, but stuck). Read that highest fence from the resource
    /// (`SELECT max(fence) FROM orders`) and raise the counter to it.
    ///
    /// Tokens are exact over the counter's whole range (the scripts keep them as the strings
    /// Redis stores): a floor such as a microsecond timestamp is fine. A counter set negative
    /// by hand is below every floor, and is raised.
    ///
    /// Errors: a `floor` above `i64::MAX − 1` is [`Error::InvalidArgument`] (nothing sent); a
    /// key of another type under the counter's name is [`Error::WrongType`], a counter that is
    /// not an integer [`Error::Redis`]; in every case the counter is left as it was.
    ///
    /// # Cancel safety
    ///
    /// One script, which Redis applies whole or not at all; a dropped call may or may not have
    /// run. Raising is idempotent (the counter becomes the larger of itself and `floor`), so
    /// calling it again is always safe.
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RFencedLock, highest_fence: u64) -> redisson_lock::Result<()> {
    /// // Redis came back empty: tokens restarted at 1, below the fences the database stored
    /// let counter = lock.raise_token_to(highest_fence).await?;
    /// assert!(counter >= highest_fence);
    /// let (token, guard) = lock.lock_and_get_token().await?;
    /// assert!(token > highest_fence); // the database accepts this holder's writes again
    /// # guard.unlock().await?;
    /// # Ok(()) }
    /// ```
    pub async fn raise_token_to(&self, floor: u64) -> Result<u64> {
        if floor > MAX_TOKEN_FLOOR {
            return Err(Error::InvalidArgument(format!(
                "a token floor of {floor} for `{}` is above i64::MAX - 1 (no token would be left)",
                self.key
            )));
        }
        let counter = name::token_key(&self.key);
        let mut inv = FENCED_RAISE_TOKEN.prepare_invoke();
        inv.key(&counter).arg(floor);
        let cfg = &self.client.config;
        let after: String = script::run(&self.client.conn, cfg.command_timeout, &counter, &inv).await?;
        after
            .parse()
            .map_err(|_| Error::Protocol(format!("the token counter {counter} is `{after}` after a raise")))
    }
}

impl Guard<Fenced> {
    /// The fencing token of this hold: higher than every token handed out for this lock before
    /// it. Pass it to the protected resource with every write (see [`Fenced`]).
    ///
    /// ```no_run
    /// # fn demo(g: redisson_lock::FencedGuard) { println!("{}", g.token()); }
    /// ```
    pub fn token(&self) -> u64 {
        self.grant()
    }
}

impl super::KindLayout for Fenced {
    const LAYOUT: &'static Layout = &LAYOUT;
    const FAMILY: super::Family = super::Family::Fenced;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grants_carry_a_token() {
        let arr = |v: &[i64]| Value::Array(v.iter().map(|n| Value::Int(*n)).collect());
        assert_eq!(
            Fenced::INSTANCE.decode(&arr(&[1, 2, 9])).unwrap(),
            Reply::Granted { count: 2, grant: 9 }
        );
        assert!(
            Fenced::INSTANCE.decode(&arr(&[1, 1])).is_err(),
            "a fenced grant has a token"
        );
        assert_eq!(
            Fenced::INSTANCE.decode(&arr(&[0, 500])).unwrap(),
            Reply::Refused { pttl: 500 }
        );
        // the scripts reply the token as the counter's exact text
        let exact = Value::Array(vec![
            Value::Int(1),
            Value::Int(1),
            Value::BulkString(b"9007199254740993".to_vec()),
        ]);
        assert_eq!(
            Fenced::INSTANCE.decode(&exact).unwrap(),
            Reply::Granted {
                count: 1,
                grant: 9_007_199_254_740_993
            }
        );
        let negative = Value::Array(vec![
            Value::Int(1),
            Value::Int(1),
            Value::BulkString(b"-3".to_vec()),
        ]);
        assert!(
            Fenced::INSTANCE.decode(&negative).is_err(),
            "a token is never negative"
        );
    }

    #[test]
    fn bounds() {
        fn assert_send_sync_static<T: Send + Sync + 'static>() {}
        assert_send_sync_static::<crate::FencedGuard>();
        assert_send_sync_static::<crate::RFencedLock>();
    }
}
