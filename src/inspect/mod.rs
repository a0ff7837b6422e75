//! Read-only views of lock state in Redis: who holds a lock, how, and for how long; the count
//! of a count-down latch; the permits of a semaphore.
//!
//! These functions only read (`TYPE`, `HGETALL`, `PTTL`, `LRANGE`, `ZRANGE`, `ZCARD`, `ZCOUNT`,
//! `GET`, `TIME`, `SCAN`, `PUBSUB`); they never change a lock, count or semaphore (not even to
//! give back a semaphore permit whose lease has ended), so they are safe to point at state
//! Java services using Redisson rely on.
//! They work on the **Redis key** of a lock (the name after any [`NameMapper`](crate::NameMapper)),
//! over any connection, e.g. [`Client::connection`](crate::Client::connection):
//!
//! ```no_run
//! # async fn demo(client: redisson_lock::Client) -> redisson_lock::Result<()> {
//! use redisson_lock::inspect;
//!
//! let info = inspect::inspect(&mut client.connection(), "lock:order:42").await?;
//! match info.kind {
//!     None => println!("not locked"),
//!     Some(kind) => {
//!         println!("{} ({}), TTL {:?}", info.key, kind, info.ttl);
//!         for h in &info.holders {
//!             println!("  {} owner {:?} x{} {}", h.client_id, h.owner_id, h.hold_count, h.role);
//!         }
//!     }
//! }
//! # Ok(()) }
//! ```
//!
//! What the keys tell (`docs/protocol.md`, "Names", "Owners" and "Lock kinds"):
//!
//! | kind | Redis state |
//! |---|---|
//! | [`LockKind::Lock`] | hash `N` with one field `<client id>:<owner id>` → hold count (Redisson's transactional locks: `<client id>:<owner id>:<transaction id>`) |
//! | [`LockKind::ReadWrite`] | hash `N` with `mode` = `read`/`write`, reader fields `<client id>:<owner id>`, the writer field `<client id>:<owner id>:write`, and one string `{N}:<field>:rwlock_timeout:<k>` per read hold |
//! | [`LockKind::Fair`] | the RLock hash plus the list `redisson_lock_queue:{N}` and the sorted set `redisson_lock_timeout:{N}` (waiter deadlines, epoch ms) |
//! | [`LockKind::Fenced`] | the RLock hash plus the string `redisson_lock_token:{N}` (the last fencing token) |
//! | [`LockKind::Group`] | hash `N` with, per value id `v` held by owner `o`: `v` = `o`, `v:o:expire_time` = the hold's deadline (epoch ms), `v:o:lock_count` = `o`'s holds of `v` |
//!
//! A fenced lock and a plain lock look the same while the token key is absent; a fair lock looks
//! like a plain lock while nobody waits (Redisson leaves no queue behind). The kind is "as far as
//! the keys tell".
//!
//! A hash is taken for a lock only when every field fits a lock (the same rule the force-unlock
//! scripts apply before they delete anything): `mode` = `read`/`write`, or an owner field
//! `<client id>:<owner id>` / `<client id>:<owner id>:<suffix>` (suffix `write`, or a transaction
//! id) whose value is a positive integer hold count. The client id may be any text without `:`
//! (Redisson's and this crate's are UUIDs); the count must be an integer as `HINCRBY` writes it.
//! Any other hash is reported as [`Error::NotALock`] naming the first field that does not fit.
//! A grouped multi-lock's hash (Redisson's `getMultiLock(group, values)`) is read when every
//! field fits that layout instead: [`LockKind::Group`], its values in [`LockInfo::values`].
//!
//! The reads of one [`inspect`] are sent as one `MULTI`/`EXEC` block (all keys share the lock's
//! hash slot), so holders, TTL, queue and token are a consistent snapshot; the read-lock timeout
//! keys are read right after.
//!
//! # Counts: count-down latches and semaphores
//!
//! [`inspect_latch`] reads a count the way Redisson's `RCountDownLatch` keeps it (`docs/protocol.md`,
//! "Count-down latch"): a decimal integer string at `N`, deleted at zero, and the subscribers of
//! its channel `redisson_countdownlatch__channel__{N}`. Redisson's `RSemaphore` keeps its available
//! permits exactly the same way (with the channel `redisson_sc:{N}`), so a plain integer at `N`
//! is *a count*: a count-down latch or a semaphore. Only the subscribers of the two channels hint
//! at which one has waiters ([`LatchInfo::listeners`]):
//!
//! ```no_run
//! # async fn demo(client: redisson_lock::Client) -> redisson_lock::Result<()> {
//! use redisson_lock::inspect::{self, Listeners};
//!
//! let info = inspect::inspect_latch(&mut client.connection(), "latch:batch:7").await?;
//! println!("count {} (exists: {})", info.count, info.exists);
//! match info.listeners() {
//!     Listeners::Latch => println!("latch waiters are listening"),
//!     Listeners::Semaphore => println!("semaphore waiters are listening"),
//!     _ => println!("a count-down latch or a semaphore: the key alone cannot tell"),
//! }
//! # Ok(()) }
//! ```
//!
//! [`inspect_semaphore`] reads a name as a semaphore: the available permits (the same integer)
//! and, for Redisson's `RPermitExpirableSemaphore`, the permits held under ids in the sorted set
//! [`semaphore_leases_key`] `{N}:timeout` (member: the 16-byte [`PermitId`](crate::PermitId),
//! score: the lease's end in epoch ms, [`NO_LEASE_END`] for none). An integer at `N` beside such
//! a set is a permit-expirable semaphore; an `RSemaphore` records no holders, so one with nothing
//! held under an id looks like a plain count:
//!
//! ```no_run
//! # async fn demo(client: redisson_lock::Client) -> redisson_lock::Result<()> {
//! let info = redisson_lock::inspect::inspect_semaphore(&mut client.connection(), "sem:gpu").await?;
//! println!("{} available, {} held, capacity {}", info.available, info.held, info.capacity());
//! for p in info.permits.iter().filter(|p| p.has_ended(info.redis_time_ms)) {
//!     println!("{}: lease ended, comes back at the next acquisition", p.id);
//! }
//! # Ok(()) }
//! ```
//!
//! # Finding them by name
//!
//! [`scan_locks`] finds the locks whose names match a glob, [`scan_synchronizers`] the counts
//! (every decimal integer string: latch, `RSemaphore` or an application's integer) and the
//! permit-expirable semaphores (an integer beside its `{N}:timeout` set); both with `SCAN`,
//! never `KEYS`, and on the node the connection talks to.

use std::time::Duration;

use redis::aio::ConnectionLike;

use crate::error::{Error, Result};
use crate::kinds::Family;
use crate::Ttl;

mod entry;
mod field;
mod group;
mod latch;
mod names;
mod scan;
mod semaphore;
mod subscribers;

pub use entry::{map_entry_of, MapEntryOf};
use field::{field_problem, hold_count, not_a_lock, owner_field, shown};
pub use field::{parse_field, Field};
pub use group::GroupValue;
pub use latch::*;
pub use names::*;
pub use scan::*;
pub use semaphore::*;
pub use subscribers::{channel_subscribers, ChannelSubscribers};

/// The most read-timeout keys probed per reader (a guard against a corrupted hold count).
const MAX_TIMEOUT_KEYS: u64 = 1_000;

/// Hashes with at most this many fields are read whole; a bigger one is first judged by a sample
/// of about as many fields (`HSCAN` pages), so an application hash with millions of fields is
/// refused without being read. The force-unlock scripts use the same bound (`CHECK_ALL`).
const CHECK_ALL: usize = 128;

/// What kind of Redisson lock a key holds, as far as its keys tell.
///
/// ```
/// use redisson_lock::inspect::LockKind;
/// assert_eq!(LockKind::ReadWrite.to_string(), "read-write");
/// assert_eq!(LockKind::Lock.as_str(), "lock");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum LockKind {
    /// A reentrant lock (`RLock`, also `RSpinLock` and the non-reentrant locks, which share its layout).
    Lock,
    /// A read-write lock (`RReadWriteLock`): the hash has a `mode` field.
    ReadWrite,
    /// A fair lock (`RFairLock`): a wait queue or its deadline set exists.
    Fair,
    /// A fenced lock (`RFencedLock`): a fencing-token counter exists.
    Fenced,
    /// A grouped multi-lock (`getMultiLock(group, values)`, Redisson 3.38+): a hash of value
    /// ids, each naming its holder ([`LockInfo::values`]).
    Group,
}

impl LockKind {
    /// The kind's short name: `lock`, `read-write`, `fair`, `fenced` or `group`.
    ///
    /// ```
    /// assert_eq!(redisson_lock::inspect::LockKind::Fair.as_str(), "fair");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            LockKind::Lock => "lock",
            LockKind::ReadWrite => "read-write",
            LockKind::Fair => "fair",
            LockKind::Fenced => "fenced",
            LockKind::Group => "group",
        }
    }

    /// The lock kinds that keep this layout in Redis (which of them took a lock cannot be told
    /// from Redis): every [`AnyKind`](crate::AnyKind) is in exactly one. None for
    /// [`LockKind::Group`]: a grouped lock is opened by its values, not by a name
    /// (`Client::group_lock`, feature `group-lock`).
    ///
    /// ```
    /// use redisson_lock::{inspect::LockKind, AnyKind};
    /// assert_eq!(LockKind::Fair.kinds(), [AnyKind::Fair, AnyKind::NonReentrantFair]);
    /// ```
    pub fn kinds(self) -> Vec<crate::AnyKind> {
        let family = match self {
            LockKind::Lock => Family::Lock,
            LockKind::ReadWrite => Family::ReadWrite,
            LockKind::Fair => Family::Fair,
            LockKind::Fenced => Family::Fenced,
            LockKind::Group => return Vec::new(),
        };
        crate::AnyKind::ALL
            .iter()
            .zip(crate::kinds::FAMILIES)
            .filter(|(_, f)| **f == family)
            .map(|(k, _)| *k)
            .collect()
    }
}

#[cfg(test)]
mod kinds_tests {
    use super::LockKind;
    use crate::AnyKind;

    /// Every kind of the crate's list is in one family (its layout says which).
    #[test]
    fn every_kind_is_in_exactly_one_family() {
        let families = [
            LockKind::Lock,
            LockKind::ReadWrite,
            LockKind::Fair,
            LockKind::Fenced,
            LockKind::Group,
        ];
        for kind in AnyKind::ALL {
            let n = families.iter().filter(|f| f.kinds().contains(kind)).count();
            assert_eq!(n, 1, "{kind}");
        }
    }
}

impl std::fmt::Display for LockKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How a holder holds the lock.
///
/// ```
/// use redisson_lock::inspect::Role;
/// assert_eq!(Role::Write.to_string(), "write");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Role {
    /// The only holder of a reentrant, fair or fenced lock.
    Exclusive,
    /// A reader of a read-write lock.
    Read,
    /// The writer of a read-write lock (field `<client id>:<owner id>:write`).
    Write,
}

impl Role {
    /// The role's short name: `exclusive`, `read` or `write`.
    ///
    /// ```
    /// assert_eq!(redisson_lock::inspect::Role::Read.as_str(), "read");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Exclusive => "exclusive",
            Role::Read => "read",
            Role::Write => "write",
        }
    }
}

impl std::fmt::Display for Role {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One read-hold timeout key of a read-write lock reader, with its remaining time.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct TimeoutKey {
    /// The key, `{N}:<field>:rwlock_timeout:<k>`.
    pub key: String,
    /// Its TTL ([`Ttl::NotLocked`] when the key is missing: that hold has expired).
    pub ttl: Ttl,
}

/// One holder of a lock.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Holder {
    /// The hash field as stored.
    pub field: String,
    /// The holder's client id (a UUID for Redisson and this crate).
    pub client_id: String,
    /// The holder's owner id (Java thread id or Rust [`OwnerId`](crate::OwnerId)).
    pub owner_id: u64,
    /// How many times the owner holds it (re-entries).
    pub hold_count: u64,
    /// Exclusive, read or write.
    pub role: Role,
    /// The transaction id of a Redisson transactional lock (field
    /// `<client id>:<owner id>:<transaction id>`).
    pub transaction_id: Option<String>,
    /// For a reader of a read-write lock: one timeout key per read hold (`k` = 1..count).
    pub timeouts: Vec<TimeoutKey>,
}

/// One waiter in a fair lock's queue.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Waiter {
    /// The waiter's lock field `<client id>:<owner id>` as queued.
    pub field: String,
    /// The field split into its parts, when it has the usual shape.
    pub parsed: Option<Field>,
    /// The waiter's deadline in the timeout set (epoch ms, the waiter's clock); after it the
    /// waiter counts as gone. `None` when it has no entry.
    pub deadline_ms: Option<i64>,
}

impl Waiter {
    /// How far the deadline is ahead of `now_ms` (negative: past), e.g. of
    /// [`LockInfo::redis_time_ms`]. A deadline already past by Redis' clock means a dead waiter
    /// (purged at the next fair-lock call) or a waiter whose client clock is behind; one far
    /// beyond `position × wait` ahead means a client clock that is ahead.
    ///
    /// ```
    /// # fn demo(w: &redisson_lock::inspect::Waiter, info: &redisson_lock::inspect::LockInfo) {
    /// if let Some(ms) = w.deadline_from(info.redis_time_ms) {
    ///     println!("{} ms left by Redis' clock", ms);
    /// }
    /// # }
    /// ```
    pub fn deadline_from(&self, now_ms: i64) -> Option<i64> {
        self.deadline_ms.map(|d| d - now_ms)
    }
}

/// A snapshot of one lock.
///
/// ```no_run
/// # async fn demo(mut conn: redisson_lock::Connection) -> redisson_lock::Result<()> {
/// let info = redisson_lock::inspect::inspect(&mut conn, "jobs").await?;
/// if info.is_locked() {
///     println!("{} holder(s), TTL {:?}", info.holders.len(), info.ttl);
/// }
/// # Ok(()) }
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct LockInfo {
    /// The lock's Redis key.
    pub key: String,
    /// The kind, or `None` when no key of any lock kind exists under this name.
    pub kind: Option<LockKind>,
    /// The lock hash's TTL ([`Ttl::NotLocked`] when it is absent).
    pub ttl: Ttl,
    /// A read-write lock's `mode` field (`read` or `write`).
    pub mode: Option<String>,
    /// Every holder, in field order (writer first for a read-write lock). For a grouped lock,
    /// each owner holding a value at [`redis_time_ms`](LockInfo::redis_time_ms), once, its count
    /// the most holds it has of one value.
    pub holders: Vec<Holder>,
    /// A grouped lock's values, by id, each with its holder, count and deadline (including those
    /// whose deadline has passed: they hold nothing).
    pub values: Vec<GroupValue>,
    /// A fair lock's queue, head first.
    pub queue: Vec<Waiter>,
    /// A fenced lock's last token (`redisson_lock_token:{N}`).
    pub token: Option<i64>,
    /// Redis' clock (`TIME`, epoch ms) when the snapshot was taken: fair-lock deadlines are
    /// written with the waiters' own clocks, so compare them with this one.
    pub redis_time_ms: i64,
}

impl LockInfo {
    /// Whether anybody holds the lock (the lock hash exists with at least one holder).
    ///
    /// ```no_run
    /// # async fn demo(mut conn: redisson_lock::Connection) -> redisson_lock::Result<()> {
    /// assert!(!redisson_lock::inspect::inspect(&mut conn, "free").await?.is_locked());
    /// # Ok(()) }
    /// ```
    pub fn is_locked(&self) -> bool {
        !self.holders.is_empty()
    }
}

/// Hash fields, PTTL, fair queue, fair deadlines, fencing token and Redis' clock, read in one
/// `MULTI`.
type Snapshot = (
    Vec<(String, String)>,
    i64,
    Vec<String>,
    Vec<(String, f64)>,
    Option<String>,
    (String, String),
);

fn ttl_of(pttl: i64) -> Ttl {
    match pttl {
        -2 => Ttl::NotLocked,
        ms if ms < 0 => Ttl::NoExpiry,
        ms => Ttl::Expires(Duration::from_millis(ms as u64)),
    }
}

fn map_err(key: &str, e: redis::RedisError) -> Error {
    Error::from_redis(key, e)
}

/// Reads the state of the lock stored under `key`.
///
/// Returns a [`LockInfo`] with `kind: None` and no holders when nothing exists under the name.
///
/// # Errors
///
/// [`Error::WrongType`] when `key` (or one of the lock's helper keys) holds another Redis type;
/// [`Error::NotALock`] when it is a hash that is not a lock (`why` names the field and what is
/// wrong with it, see the module docs) or the fencing token is not an integer;
/// [`Error::Redis`] for connection errors.
///
/// # Examples
///
/// ```no_run
/// # async fn demo(client: redisson_lock::Client) -> redisson_lock::Result<()> {
/// let info = redisson_lock::inspect::inspect(&mut client.connection(), "order:42").await?;
/// for h in &info.holders {
///     println!("{} holds it {} time(s)", h.field, h.hold_count);
/// }
/// # Ok(()) }
/// ```
pub async fn inspect<C>(conn: &mut C, key: &str) -> Result<LockInfo>
where
    C: ConnectionLike + Send,
{
    if key.is_empty() {
        return Err(Error::InvalidArgument("lock name must not be empty".into()));
    }
    let queue_key = fair_queue_key(key);
    let timeout_key = fair_timeout_key(key);
    let token_key = fence_token_key(key);

    // every key a kind keeps beside the lock, once, with the type it must have
    let mut beside: Vec<(String, &'static str)> = Vec::new();
    for spec in layouts().iter().flat_map(|l| l.keys()) {
        if let (false, Some(want)) = (spec.per_request(), spec.redis_type()) {
            let name = spec.name(key, "");
            if !beside.iter().any(|(n, _)| *n == name) {
                beside.push((name, want));
            }
        }
    }
    let mut pipe = redis::pipe();
    pipe.atomic();
    for (k, _) in &beside {
        pipe.cmd("TYPE").arg(k);
    }
    let types: Vec<String> = pipe.query_async(conn).await.map_err(|e| map_err(key, e))?;
    let mut t_lock = "none";
    for ((k, want), t) in beside.iter().zip(&types) {
        if t != "none" && t != want {
            return Err(Error::WrongType { key: k.clone() });
        }
        if k == key {
            t_lock = t;
        }
    }
    if t_lock == "hash" {
        check_sample(conn, key).await?;
    }

    let (fields, pttl, queue, deadlines, token, time): Snapshot = redis::pipe()
        .atomic()
        .cmd("HGETALL")
        .arg(key)
        .cmd("PTTL")
        .arg(key)
        .cmd("LRANGE")
        .arg(&queue_key)
        .arg(0)
        .arg(-1)
        .cmd("ZRANGE")
        .arg(&timeout_key)
        .arg(0)
        .arg(-1)
        .arg("WITHSCORES")
        .cmd("GET")
        .arg(&token_key)
        .cmd("TIME")
        .query_async(conn)
        .await
        .map_err(|e| map_err(key, e))?;
    let redis_time_ms = match (time.0.parse::<i64>(), time.1.parse::<i64>()) {
        (Ok(secs), Ok(micros)) => secs * 1000 + micros / 1000,
        _ => return Err(Error::Protocol(format!("TIME replied {time:?}"))),
    };

    // Decide from this snapshot only: the key types read before may be stale by now.
    let has_hash = !fields.is_empty();
    let fair = !queue.is_empty() || !deadlines.is_empty();
    let mut mode = None;
    let mut holders = Vec::new();
    let mut values = Vec::new();
    if let Some(problem) = fields.iter().find_map(|(f, v)| field_problem(f, v)) {
        (values, holders) =
            group::read_group(&fields, redis_time_ms).ok_or_else(|| not_a_lock(key, &problem))?;
    }
    for (field, value) in fields.into_iter().filter(|_| values.is_empty()) {
        if field == "mode" {
            mode = Some(value);
            continue;
        }
        // both checked by `field_problem`
        let (Some(parsed), Some(count)) = (owner_field(&field), hold_count(&value)) else {
            return Err(not_a_lock(
                key,
                &format!("field `{}` is not an owner", shown(&field)),
            ));
        };
        holders.push(Holder {
            field,
            client_id: parsed.client_id,
            owner_id: parsed.owner_id,
            hold_count: count,
            role: if parsed.write {
                Role::Write
            } else {
                Role::Exclusive
            },
            transaction_id: parsed.transaction_id,
            timeouts: Vec::new(),
        });
    }
    if mode.is_some() {
        for h in &mut holders {
            if h.role == Role::Exclusive {
                h.role = Role::Read;
            }
        }
    }
    holders.sort_by(|a, b| (a.role != Role::Write, &a.field).cmp(&(b.role != Role::Write, &b.field)));

    // The read-hold timeout keys, one per read hold of each reader.
    let probes: Vec<(usize, String)> = holders
        .iter()
        .enumerate()
        .filter(|(_, h)| h.role == Role::Read)
        .flat_map(|(i, h)| {
            (1..=h.hold_count.min(MAX_TIMEOUT_KEYS)).map(move |k| (i, read_timeout_key(key, &h.field, k)))
        })
        .collect();
    if !probes.is_empty() {
        let mut pipe = redis::pipe();
        for (_, k) in &probes {
            pipe.cmd("PTTL").arg(k);
        }
        let ttls: Vec<i64> = pipe.query_async(conn).await.map_err(|e| map_err(key, e))?;
        for ((i, k), pttl) in probes.into_iter().zip(ttls) {
            holders[i].timeouts.push(TimeoutKey {
                key: k,
                ttl: ttl_of(pttl),
            });
        }
    }

    let queue: Vec<Waiter> = queue
        .into_iter()
        .map(|field| Waiter {
            parsed: parse_field(&field),
            deadline_ms: deadlines
                .iter()
                .find(|(m, _)| *m == field)
                .map(|(_, s)| *s as i64),
            field,
        })
        .collect();
    let token = match token {
        Some(t) => Some(t.parse::<i64>().map_err(|_| Error::NotALock {
            key: key.to_owned(),
            why: format!(
                "its fencing token `{token_key}` is `{}`, not an integer",
                shown(&t)
            ),
        })?),
        None => None,
    };

    let kind = if !values.is_empty() {
        Some(LockKind::Group)
    } else if mode.is_some() {
        Some(LockKind::ReadWrite)
    } else if fair {
        Some(LockKind::Fair)
    } else if token.is_some() {
        Some(LockKind::Fenced)
    } else if has_hash {
        Some(LockKind::Lock)
    } else {
        None
    };

    Ok(LockInfo {
        key: key.to_owned(),
        kind,
        ttl: if has_hash { ttl_of(pttl) } else { Ttl::NotLocked },
        mode,
        holders,
        values,
        queue,
        token,
        redis_time_ms,
    })
}

/// Checks a hash bigger than [`CHECK_ALL`] fields on a sample before [`inspect`] reads it whole, as
/// the force-unlock scripts do: the first `HSCAN` pages, at least `CHECK_ALL` fields (at most 10
/// pages). An application hash with millions of fields is thus refused without being read.
async fn check_sample<C>(conn: &mut C, key: &str) -> Result<()>
where
    C: ConnectionLike + Send,
{
    let size: usize = redis::cmd("HLEN")
        .arg(key)
        .query_async(conn)
        .await
        .map_err(|e| map_err(key, e))?;
    if size <= CHECK_ALL {
        return Ok(()); // read whole and checked field by field
    }
    let mut cursor: u64 = 0;
    let mut sampled = 0;
    for _ in 0..10 {
        let (next, page): (u64, Vec<(String, String)>) = redis::cmd("HSCAN")
            .arg(key)
            .arg(cursor)
            .arg("COUNT")
            .arg(CHECK_ALL)
            .query_async(conn)
            .await
            .map_err(|e| map_err(key, e))?;
        // a lock's fields or a grouped lock's: the whole read decides which
        for (field, value) in &page {
            if let Some(problem) = field_problem(field, value) {
                if group::group_field_problem(field, value).is_some() {
                    return Err(not_a_lock(key, &problem));
                }
            }
        }
        sampled += page.len();
        cursor = next;
        if cursor == 0 || sampled >= CHECK_ALL {
            break;
        }
    }
    if sampled == 0 {
        return Err(not_a_lock(
            key,
            &format!("none of its {size} fields could be sampled"),
        ));
    }
    Ok(())
}
