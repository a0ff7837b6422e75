//! A read-only view of a semaphore: Redisson's `RSemaphore` (the available permits) or
//! `RPermitExpirableSemaphore` (the available permits and the permits held under ids, with
//! their leases).
//! The layout is in `docs/protocol.md`, "Semaphore (`RSemaphore`)" and "Permit-expirable
//! semaphore (`RPermitExpirableSemaphore`)".

use redis::aio::ConnectionLike;

use super::field::shown;
use super::subscribers::{subscribers, ChannelSubscribers};
use super::{map_err, ttl_of};
use crate::error::{Error, Result};
use crate::{PermitId, Ttl};

/// The lease-end score of a permit held without a lease (Redisson's, about `i64::MAX / 10_000`
/// ms): such a permit never comes back by itself.
pub const NO_LEASE_END: i64 = 922_337_203_685_477;

/// The most held permits [`inspect_semaphore`] lists (those whose leases end first); the rest
/// are only counted ([`SemaphoreInfo::held`], [`SemaphoreInfo::ended`]).
pub const MAX_PERMITS_LISTED: usize = 1_000;

/// The channel of a semaphore (`RSemaphore`, `RPermitExpirableSemaphore`): `redisson_sc:{N}`
/// (`redisson_sc:N` when `N` contains `{`, the rule of the lock channels). Its waiters listen
/// there; a message is a number of permits (the count now available, or for some calls the
/// number given back).
///
/// ```
/// use redisson_lock::inspect::semaphore_channel;
/// assert_eq!(semaphore_channel("pool"), "redisson_sc:{pool}");
/// assert_eq!(semaphore_channel("{t}pool"), "redisson_sc:{t}pool");
/// ```
pub fn semaphore_channel(key: &str) -> String {
    crate::semaphore::channel(key)
}

/// The sorted set of the permits a permit-expirable semaphore holds under ids:
/// `{N}:timeout` (`N:timeout` when `N` contains `{`). Member: the 16-byte permit id; score: when
/// its lease ends, in epoch ms ([`NO_LEASE_END`]: no lease).
///
/// ```
/// use redisson_lock::inspect::semaphore_leases_key;
/// assert_eq!(semaphore_leases_key("sem:gpu"), "{sem:gpu}:timeout");
/// assert_eq!(semaphore_leases_key("{t}gpu"), "{t}gpu:timeout");
/// ```
pub fn semaphore_leases_key(key: &str) -> String {
    crate::semaphore::leases(key)
}

/// One permit held under an id in a permit-expirable semaphore.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct HeldPermit {
    /// The permit's id (shown as 32 hex digits, as Redisson shows it).
    pub id: PermitId,
    /// When its lease ends (epoch ms, written with the acquiring client's clock); `None`: held
    /// without a lease, until released.
    pub lease_end_ms: Option<i64>,
}

impl HeldPermit {
    /// How far the lease end is ahead of `now_ms` (negative: past), e.g. of
    /// [`SemaphoreInfo::redis_time_ms`]; `None` without a lease.
    ///
    /// ```
    /// # fn demo(p: &redisson_lock::inspect::HeldPermit, info: &redisson_lock::inspect::SemaphoreInfo) {
    /// match p.remaining_from(info.redis_time_ms) {
    ///     Some(ms) if ms < 0 => println!("{} ended {} ms ago", p.id, -ms),
    ///     Some(ms) => println!("{} comes back in {} ms", p.id, ms),
    ///     None => println!("{} has no lease", p.id),
    /// }
    /// # }
    /// ```
    pub fn remaining_from(&self, now_ms: i64) -> Option<i64> {
        self.lease_end_ms.map(|end| end.saturating_sub(now_ms))
    }

    /// Whether the lease has ended by `now_ms`: the permit still counts as held, and comes back
    /// at the next acquisition or count by any client (Redis has no timer for it). The same range
    /// the semaphore's scripts reclaim (`ZRANGEBYSCORE 0 now`).
    ///
    /// ```
    /// # fn demo(p: &redisson_lock::inspect::HeldPermit, info: &redisson_lock::inspect::SemaphoreInfo) {
    /// if p.has_ended(info.redis_time_ms) {
    ///     println!("{}: lease over, not reclaimed yet", p.id);
    /// }
    /// # }
    /// ```
    pub fn has_ended(&self, now_ms: i64) -> bool {
        self.lease_end_ms.is_some_and(|end| (0..=now_ms).contains(&end))
    }
}

/// A snapshot of a semaphore.
///
/// An `RSemaphore` keeps only its available permits (a decimal string at the name): who took
/// the others is not recorded. An `RPermitExpirableSemaphore` also keeps every permit held under
/// an id ([`semaphore_leases_key`]), so its capacity is known: available + held. One that holds
/// nothing at the moment looks like an `RSemaphore` ([`is_expirable`](Self::is_expirable) says
/// what the keys tell).
///
/// ```no_run
/// # async fn demo(mut conn: redisson_lock::Connection) -> redisson_lock::Result<()> {
/// let info = redisson_lock::inspect::inspect_semaphore(&mut conn, "sem:gpu").await?;
/// println!("{} available, {} held ({} ended)", info.available, info.held, info.ended);
/// # Ok(()) }
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct SemaphoreInfo {
    /// The Redis key of the available permits.
    pub key: String,
    /// Whether that key exists (an absent semaphore has 0 permits, as Redisson says).
    pub exists: bool,
    /// The available permits; 0 when the key is absent. Signed: `addPermits` / `reducePermits`
    /// may take the count below zero.
    pub available: i64,
    /// The key's TTL: [`Ttl::NoExpiry`] unless one was set, [`Ttl::NotLocked`] when absent.
    pub ttl: Ttl,
    /// The key of the held permits ([`semaphore_leases_key`]).
    pub leases_key: String,
    /// Its TTL ([`Ttl::NotLocked`] when it is absent: nothing is held under an id).
    pub leases_ttl: Ttl,
    /// How many permits are held under ids (`ZCARD`), including those whose lease has ended.
    pub held: u64,
    /// The held permits whose leases end first (those without a lease last), at most
    /// [`MAX_PERMITS_LISTED`].
    pub permits: Vec<HeldPermit>,
    /// How many held permits' leases have ended by [`redis_time_ms`](Self::redis_time_ms) but
    /// were not given back yet (that happens at the next acquisition or count by any client).
    pub ended: u64,
    /// Subscribers of [`semaphore_channel`] (connections whose waiters listen).
    pub channel: ChannelSubscribers,
    /// Redis' clock (`TIME`, epoch ms) when the snapshot was taken: lease ends are written with
    /// the acquiring clients' clocks, so compare them with this one.
    pub redis_time_ms: i64,
}

impl SemaphoreInfo {
    /// Whether permits are held under ids: only an `RPermitExpirableSemaphore` keeps them.
    ///
    /// ```no_run
    /// # async fn demo(mut conn: redisson_lock::Connection) -> redisson_lock::Result<()> {
    /// let info = redisson_lock::inspect::inspect_semaphore(&mut conn, "sem:gpu").await?;
    /// if info.is_expirable() {
    ///     println!("capacity {}", info.capacity());
    /// }
    /// # Ok(()) }
    /// ```
    pub fn is_expirable(&self) -> bool {
        self.held > 0
    }

    /// Available plus held permits: an `RPermitExpirableSemaphore`'s total (Redisson's
    /// `getPermits`). For an `RSemaphore` only the available permits are known.
    ///
    /// ```no_run
    /// # async fn demo(mut conn: redisson_lock::Connection) -> redisson_lock::Result<()> {
    /// let info = redisson_lock::inspect::inspect_semaphore(&mut conn, "sem:gpu").await?;
    /// assert_eq!(info.capacity(), info.available + info.held as i64);
    /// # Ok(()) }
    /// ```
    pub fn capacity(&self) -> i64 {
        self.available
            .saturating_add(i64::try_from(self.held).unwrap_or(i64::MAX))
    }
}

/// Available permits, their PTTL, held count, the first held permits with scores, the held
/// permits' PTTL and Redis' clock, read in one `MULTI`.
type Snapshot = (
    Option<String>,
    i64,
    u64,
    Vec<(Vec<u8>, f64)>,
    i64,
    (String, String),
);

/// A member of the leases' set as text for an error message: the text when it is printable,
/// else its bytes in hex.
fn shown_member(bytes: &[u8]) -> String {
    match std::str::from_utf8(bytes) {
        Ok(text) if !text.chars().any(char::is_control) => format!("`{}`", shown(text)),
        _ => {
            let hex: String = bytes.iter().take(40).map(|b| format!("{b:02x}")).collect();
            let more = if bytes.len() > 40 { "..." } else { "" };
            format!("0x{hex}{more}")
        }
    }
}

/// One member and score of the leases' set as a held permit.
fn held_permit(key: &str, leases: &str, member: Vec<u8>, score: f64) -> Result<HeldPermit> {
    let Ok(bytes) = <[u8; 16]>::try_from(member.as_slice()) else {
        return Err(Error::Protocol(format!(
            "`{leases}` (the held permits of semaphore `{key}`) has the member {} ({} bytes), \
             not a permit id (16 bytes)",
            shown_member(&member),
            member.len()
        )));
    };
    // Redis scores are finite or ±inf; a score at or beyond the no-lease mark never ends
    let lease_end_ms = (score < NO_LEASE_END as f64).then(|| score.floor() as i64);
    Ok(HeldPermit {
        id: PermitId::from_bytes(bytes),
        lease_end_ms,
    })
}

/// Reads the semaphore stored under `key` (its Redis key, after any name mapper) and the
/// subscribers of its channel.
///
/// Only reads: `TYPE` of the two keys, then `GET`, `PTTL`, `ZCARD`, `ZRANGE ... WITHSCORES` (the
/// first [`MAX_PERMITS_LISTED`]), `PTTL` and `TIME` in one `MULTI` (both keys share a hash slot),
/// `ZCOUNT` when not every held permit was listed, then `PUBSUB NUMSUB` and
/// `PUBSUB SHARDNUMSUB`. Leases that have ended are reported ([`SemaphoreInfo::ended`]), never
/// given back: that is left to the semaphore's clients, as in Redisson.
///
/// # Errors
///
/// [`Error::WrongType`] when `key` holds another type than a string, or the held permits' key
/// another type than a sorted set; [`Error::Protocol`] when `key` holds a string that is not a
/// decimal integer, or the sorted set has a member that is not a 16-byte permit id;
/// [`Error::Redis`] for connection errors.
///
/// # Examples
///
/// ```no_run
/// # async fn demo(client: redisson_lock::Client) -> redisson_lock::Result<()> {
/// let info = redisson_lock::inspect::inspect_semaphore(&mut client.connection(), "sem:gpu").await?;
/// for p in &info.permits {
///     println!("{} lease end {:?}", p.id, p.lease_end_ms);
/// }
/// # Ok(()) }
/// ```
pub async fn inspect_semaphore<C>(conn: &mut C, key: &str) -> Result<SemaphoreInfo>
where
    C: ConnectionLike + Send,
{
    if key.is_empty() {
        return Err(Error::InvalidArgument("semaphore name must not be empty".into()));
    }
    let leases = semaphore_leases_key(key);
    let (t_key, t_leases): (String, String) = redis::pipe()
        .atomic()
        .cmd("TYPE")
        .arg(key)
        .cmd("TYPE")
        .arg(&leases)
        .query_async(conn)
        .await
        .map_err(|e| map_err(key, e))?;
    if t_key != "none" && t_key != "string" {
        return Err(Error::WrongType { key: key.to_owned() });
    }
    if t_leases != "none" && t_leases != "zset" {
        return Err(Error::WrongType { key: leases });
    }
    // the types may have changed since: GET or ZRANGE then fail with WRONGTYPE, mapped to it
    let (value, pttl, held, first, leases_pttl, time): Snapshot = redis::pipe()
        .atomic()
        .cmd("GET")
        .arg(key)
        .cmd("PTTL")
        .arg(key)
        .cmd("ZCARD")
        .arg(&leases)
        .cmd("ZRANGE")
        .arg(&leases)
        .arg(0)
        .arg(MAX_PERMITS_LISTED - 1)
        .arg("WITHSCORES")
        .cmd("PTTL")
        .arg(&leases)
        .cmd("TIME")
        .query_async(conn)
        .await
        .map_err(|e| map_err(key, e))?;
    let redis_time_ms = match (time.0.parse::<i64>(), time.1.parse::<i64>()) {
        (Ok(secs), Ok(micros)) => secs * 1000 + micros / 1000,
        _ => return Err(Error::Protocol(format!("TIME replied {time:?}"))),
    };
    let available = match &value {
        None => 0,
        Some(text) => text
            .parse::<i64>()
            .map_err(|_| Error::Protocol(format!("`{key}` holds `{}`, not a count", shown(text))))?,
    };
    let permits = first
        .into_iter()
        .map(|(member, score)| held_permit(key, &leases, member, score))
        .collect::<Result<Vec<_>>>()?;
    let listed_ended = permits.iter().filter(|p| p.has_ended(redis_time_ms)).count() as u64;
    let ended = if (permits.len() as u64) < held && listed_ended == permits.len() as u64 {
        // every listed lease has ended: more may have among those not listed
        redis::cmd("ZCOUNT")
            .arg(&leases)
            .arg(0)
            .arg(redis_time_ms)
            .query_async(conn)
            .await
            .map_err(|e| map_err(key, e))?
    } else {
        listed_ended
    };
    let [channel] = subscribers(conn, [semaphore_channel(key)]).await?;
    Ok(SemaphoreInfo {
        key: key.to_owned(),
        exists: value.is_some(),
        available,
        ttl: if value.is_some() {
            ttl_of(pttl)
        } else {
            Ttl::NotLocked
        },
        leases_key: leases,
        leases_ttl: if held > 0 {
            ttl_of(leases_pttl)
        } else {
            Ttl::NotLocked
        },
        held,
        permits,
        ended,
        channel,
        redis_time_ms,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn members_become_permits_or_are_refused() {
        let id = [0xab; 16];
        let p = held_permit("s", "{s}:timeout", id.to_vec(), 1_700_000_000_123.0).unwrap();
        assert_eq!(p.id, PermitId::from_bytes(id));
        assert_eq!(p.lease_end_ms, Some(1_700_000_000_123));
        assert!(p.has_ended(1_700_000_000_123));
        assert!(!p.has_ended(1_700_000_000_122));
        assert_eq!(p.remaining_from(1_700_000_000_000), Some(123));

        let p = held_permit("s", "{s}:timeout", id.to_vec(), NO_LEASE_END as f64).unwrap();
        assert_eq!((p.lease_end_ms, p.has_ended(i64::MAX)), (None, false));
        let p = held_permit("s", "{s}:timeout", id.to_vec(), f64::INFINITY).unwrap();
        assert_eq!(p.lease_end_ms, None);
        // a negative end is never reclaimed by the scripts (ZRANGEBYSCORE 0 now)
        let p = held_permit("s", "{s}:timeout", id.to_vec(), -5.0).unwrap();
        assert!(!p.has_ended(10));

        let e = held_permit("s", "{s}:timeout", b"abc".to_vec(), 1.0).unwrap_err();
        let m = e.to_string();
        assert!(m.contains("`abc` (3 bytes)") && m.contains("{s}:timeout"), "{m}");
        let e = held_permit("s", "{s}:timeout", vec![0, 1, 255], 1.0).unwrap_err();
        assert!(e.to_string().contains("0x0001ff (3 bytes)"), "{e}");
    }

    #[test]
    fn names() {
        assert_eq!(semaphore_leases_key("a"), "{a}:timeout");
        assert_eq!(semaphore_channel("a"), "redisson_sc:{a}");
    }
}
