//! Finding locks, counts and semaphores by a glob over their names, with `SCAN` (never `KEYS`):
//! [`scan_locks`] and [`scan_synchronizers`]. Only reads.

use std::collections::HashSet;

use redis::aio::ConnectionLike;

use super::latch::{count_down_latch_channel, LatchInfo};
use super::semaphore::{inspect_semaphore, semaphore_channel, semaphore_leases_key, SemaphoreInfo};
use super::subscribers::channel_subscribers;
use super::{inspect, map_err, ttl_of, LockInfo};
use crate::error::{Error, Result};

/// The `COUNT` hint of every `SCAN` page.
const SCAN_COUNT: usize = 500;

/// How many strings [`scan_synchronizers`] reads in one pipeline.
const BATCH: usize = 100;

/// The keys matching `pattern`, sorted, each once. `redis_type` lets the server filter by type
/// (`SCAN ... TYPE`, Redis 6+); an older server refuses it, and every matching key is returned
/// (the caller checks each one's type anyway).
async fn scan_keys<C>(conn: &mut C, pattern: &str, redis_type: &str) -> Result<Vec<String>>
where
    C: ConnectionLike + Send,
{
    let mut seen = HashSet::new();
    let mut keys = Vec::new();
    let mut cursor: u64 = 0;
    let mut typed = true;
    loop {
        let mut cmd = redis::cmd("SCAN");
        cmd.arg(cursor)
            .arg("MATCH")
            .arg(pattern)
            .arg("COUNT")
            .arg(SCAN_COUNT);
        if typed {
            cmd.arg("TYPE").arg(redis_type);
        }
        let reply: redis::RedisResult<(u64, Vec<String>)> = cmd.query_async(conn).await;
        let (next, batch) = match reply {
            Ok(r) => r,
            Err(e) if typed && cursor == 0 && !e.is_io_error() => {
                typed = false;
                continue;
            }
            Err(e) => return Err(e.into()),
        };
        for k in batch {
            if seen.insert(k.clone()) {
                keys.push(k);
            }
        }
        cursor = next;
        if cursor == 0 {
            break;
        }
    }
    keys.sort();
    Ok(keys)
}

/// Finds the locks whose keys match the glob `pattern` (`*` for all) with `SCAN` (never `KEYS`)
/// and inspects each one; hashes that do not look like locks are skipped. Sorted by key.
///
/// Only lock hashes are found (a fair lock's queue or a fenced lock's token alone, with nobody
/// holding the lock, is not listed). On a Redis Cluster connection `SCAN` reaches one node only.
///
/// # Errors
///
/// [`Error::Redis`] for connection errors.
///
/// # Examples
///
/// ```no_run
/// # async fn demo(client: redisson_lock::Client) -> redisson_lock::Result<()> {
/// for info in redisson_lock::inspect::scan_locks(&mut client.connection(), "lock:*").await? {
///     println!("{} {:?} {} holder(s)", info.key, info.kind, info.holders.len());
/// }
/// # Ok(()) }
/// ```
pub async fn scan_locks<C>(conn: &mut C, pattern: &str) -> Result<Vec<LockInfo>>
where
    C: ConnectionLike + Send,
{
    let mut out = Vec::new();
    for k in scan_keys(conn, pattern, "hash").await? {
        match inspect(conn, &k).await {
            Ok(info) if info.is_locked() => out.push(info),
            // another type, or a hash (or token) that is not a lock's
            Ok(_) | Err(Error::WrongType { .. } | Error::NotALock { .. }) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(out)
}

/// A count or semaphore found by [`scan_synchronizers`].
///
/// ```no_run
/// # async fn demo(mut conn: redisson_lock::Connection) -> redisson_lock::Result<()> {
/// use redisson_lock::inspect::{scan_synchronizers, Synchronizer};
///
/// for found in scan_synchronizers(&mut conn, "*").await? {
///     match found {
///         Synchronizer::Count(c) => println!("{}: count {} ({})", c.key, c.count, c.listeners()),
///         Synchronizer::ExpirableSemaphore(s) => println!("{}: {} held", s.key, s.held),
///         _ => {}
///     }
/// }
/// # Ok(()) }
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Synchronizer {
    /// A decimal integer string with no held permits beside it: a count-down latch, an
    /// `RSemaphore`'s available permits, or any integer an application keeps (the key alone
    /// cannot tell; [`LatchInfo::listeners`] says whose waiters listen).
    Count(LatchInfo),
    /// An integer beside a sorted set [`semaphore_leases_key`] of permit ids: a permit-expirable
    /// semaphore (`RPermitExpirableSemaphore`), as [`inspect_semaphore`] reads it.
    ExpirableSemaphore(SemaphoreInfo),
}

impl Synchronizer {
    /// The Redis key (the count's or the semaphore's name).
    ///
    /// ```no_run
    /// # async fn demo(mut conn: redisson_lock::Connection) -> redisson_lock::Result<()> {
    /// for found in redisson_lock::inspect::scan_synchronizers(&mut conn, "batch:*").await? {
    ///     println!("{}", found.key());
    /// }
    /// # Ok(()) }
    /// ```
    pub fn key(&self) -> &str {
        match self {
            Synchronizer::Count(c) => &c.key,
            Synchronizer::ExpirableSemaphore(s) => &s.key,
        }
    }
}

/// Whether `key` is one that locks keep beside their hash, which holds an integer too: a fenced
/// lock's token, a request latch, a read hold's timeout key.
fn is_lock_helper(key: &str) -> bool {
    let read_hold = key
        .rsplit_once(":rwlock_timeout:")
        .is_some_and(|(_, k)| !k.is_empty() && k.bytes().all(|b| b.is_ascii_digit()));
    read_hold || key.starts_with("redisson_lock_token:") || key.starts_with("redisson_unlock_latch:")
}

/// Finds the counts and permit-expirable semaphores whose names match the glob `pattern` (`*`
/// for all) with `SCAN` (never `KEYS`). Sorted by key.
///
/// Every string key that holds a decimal integer is one: a [`Synchronizer::ExpirableSemaphore`]
/// when a sorted set [`semaphore_leases_key`] of permit ids is beside it (then read by
/// [`inspect_semaphore`]), otherwise a [`Synchronizer::Count`], read as [`inspect_latch`]
/// reads it: Redisson's count-down latch and `RSemaphore` keep exactly such an integer, and so
/// may an application. Strings that are not integers are skipped, and so are the integers
/// locks keep beside their hash ([`fence_token_key`], [`latch_key`], [`read_timeout_key`]).
/// A permit-expirable semaphore whose integer is gone (only its held permits remain) is not
/// found; [`inspect_semaphore`] reads it by name.
///
/// Only reads: `SCAN ... TYPE string` (every key's type on servers before Redis 6), then per
/// batch of 100 strings `GET`, `PTTL` and the `TYPE` of [`semaphore_leases_key`] in one
/// pipeline and `PUBSUB NUMSUB` / `PUBSUB SHARDNUMSUB` of the counts' channels. Subscribers
/// are those of the node `conn` talks to; on a Redis Cluster connection `SCAN` reaches one node
/// only.
///
/// [`inspect_latch`]: super::inspect_latch
/// [`fence_token_key`]: super::fence_token_key
/// [`latch_key`]: super::latch_key
/// [`read_timeout_key`]: super::read_timeout_key
///
/// # Errors
///
/// [`Error::Redis`] for connection errors (and for a command refused other than with
/// `WRONGTYPE`, e.g. by an ACL).
///
/// # Examples
///
/// ```no_run
/// # async fn demo(client: redisson_lock::Client) -> redisson_lock::Result<()> {
/// use redisson_lock::inspect::{scan_synchronizers, Synchronizer};
///
/// for found in scan_synchronizers(&mut client.connection(), "batch:*").await? {
///     if let Synchronizer::Count(c) = found {
///         println!("{}: {} ({} listening)", c.key, c.count, c.listeners());
///     }
/// }
/// # Ok(()) }
/// ```
pub async fn scan_synchronizers<C>(conn: &mut C, pattern: &str) -> Result<Vec<Synchronizer>>
where
    C: ConnectionLike + Send,
{
    let keys: Vec<String> = scan_keys(conn, pattern, "string")
        .await?
        .into_iter()
        .filter(|k| !is_lock_helper(k))
        .collect();
    let mut out = Vec::new();
    for batch in keys.chunks(BATCH) {
        read_batch(conn, batch, &mut out).await?;
    }
    out.sort_by(|a, b| a.key().cmp(b.key()));
    Ok(out)
}

/// One reply of a pipeline run with `ignore_errors`, as `T`; `None` for a `WRONGTYPE` error
/// (the key changed type since it was found).
fn reply<T: redis::FromRedisValue>(key: &str, r: &redis::RedisResult<redis::Value>) -> Result<Option<T>> {
    match r {
        Ok(v) => redis::from_redis_value_ref(v)
            .map(Some)
            .map_err(|e| Error::Protocol(format!("unexpected reply for `{key}`: {e}"))),
        Err(e) => match map_err(key, e.clone()) {
            Error::WrongType { .. } => Ok(None),
            other => Err(other),
        },
    }
}

/// The integer a string holds, or `None` when it is not a decimal integer.
fn integer(value: &[u8]) -> Option<i64> {
    std::str::from_utf8(value).ok()?.parse().ok()
}

/// Reads `keys` (strings when they were found) and appends the counts and semaphores among
/// them to `out`.
async fn read_batch<C>(conn: &mut C, keys: &[String], out: &mut Vec<Synchronizer>) -> Result<()>
where
    C: ConnectionLike + Send,
{
    let mut pipe = redis::pipe();
    pipe.ignore_errors();
    for k in keys {
        pipe.cmd("GET")
            .arg(k)
            .cmd("PTTL")
            .arg(k)
            .cmd("TYPE")
            .arg(semaphore_leases_key(k));
    }
    let replies: Vec<redis::RedisResult<redis::Value>> = pipe.query_async(conn).await?;
    if replies.len() != keys.len() * 3 {
        return Err(Error::Protocol(format!(
            "{} replies to a pipeline of {} commands",
            replies.len(),
            keys.len() * 3
        )));
    }
    let mut counts = Vec::new();
    for (k, r) in keys.iter().zip(replies.chunks(3)) {
        let Some(Some(value)) = reply::<Option<Vec<u8>>>(k, &r[0])? else {
            continue; // gone, or not a string any more
        };
        let Some(count) = integer(&value) else {
            continue; // text, not a count
        };
        let ttl = match reply::<i64>(k, &r[1])? {
            Some(-2) | None => continue, // deleted since the GET, or not a string any more
            Some(pttl) => ttl_of(pttl),
        };
        let leases = reply::<String>(k, &r[2])?;
        if leases.as_deref() == Some("zset") {
            match inspect_semaphore(conn, k).await {
                Ok(info) if info.exists => {
                    out.push(Synchronizer::ExpirableSemaphore(info));
                    continue;
                }
                Ok(_) => continue, // deleted since
                // the set is not one of permit ids, or the key changed type: not a semaphore's
                Err(Error::WrongType { .. } | Error::Protocol(_)) => {}
                Err(e) => return Err(e),
            }
        }
        counts.push((k.clone(), count, ttl));
    }
    let channels: Vec<String> = counts
        .iter()
        .flat_map(|(k, _, _)| [count_down_latch_channel(k), semaphore_channel(k)])
        .collect();
    let mut subscribers = channel_subscribers(conn, &channels).await?.into_iter();
    for (key, count, ttl) in counts {
        let (Some(latch_channel), Some(semaphore_channel)) = (subscribers.next(), subscribers.next()) else {
            return Err(Error::Protocol("fewer subscriber counts than channels".into()));
        };
        out.push(Synchronizer::Count(LatchInfo {
            key,
            exists: true,
            count,
            ttl,
            latch_channel,
            semaphore_channel,
        }));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lock_helpers_are_not_counts() {
        for k in [
            "redisson_lock_token:{f}",
            "redisson_unlock_latch:{a}:0f3c",
            "{doc}:6f1c2a9e-3b7d-4c11-9a0e-5d2f8b7c4e10:5:rwlock_timeout:2",
        ] {
            assert!(is_lock_helper(k), "{k}");
        }
        for k in [
            "batch:7",
            "x:rwlock_timeout:",
            "x:rwlock_timeout:a",
            "redisson_lock_token",
        ] {
            assert!(!is_lock_helper(k), "{k}");
        }
    }

    #[test]
    fn integers_only() {
        assert_eq!(integer(b"7"), Some(7));
        assert_eq!(integer(b"-3"), Some(-3));
        for bad in [&b"7.5"[..], b"abc", b"", b"\xff7", b"99999999999999999999"] {
            assert_eq!(integer(bad), None, "{bad:?}");
        }
    }
}
