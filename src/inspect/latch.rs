//! A read-only view of a count: Redisson's count-down latch, or its semaphore, which keep the
//! same thing in Redis (a decimal integer string at the name).

use redis::aio::ConnectionLike;

use super::semaphore::semaphore_channel;
use super::subscribers::{subscribers, ChannelSubscribers};
use super::{map_err, ttl_of};
use crate::count_down_latch;
use crate::error::{Error, Result};
use crate::Ttl;

/// The channel of a count-down latch (`RCountDownLatch`): `redisson_countdownlatch__channel__{N}`,
/// braces always added (also when `N` has some). It carries `1` when a count is set or the latch
/// deleted, `0` when a count-down reaches zero (`docs/protocol.md`, "Count-down latch").
///
/// ```
/// use redisson_lock::inspect::count_down_latch_channel;
/// assert_eq!(count_down_latch_channel("batch"), "redisson_countdownlatch__channel__{batch}");
/// assert_eq!(count_down_latch_channel("{t}b"), "redisson_countdownlatch__channel__{{t}b}");
/// ```
pub fn count_down_latch_channel(key: &str) -> String {
    count_down_latch::channel(key)
}

/// Which of the two channels of a count has subscribers: the only hint Redis gives of whether
/// the integer at the name is a count-down latch or a semaphore.
///
/// ```
/// use redisson_lock::inspect::Listeners;
/// assert_eq!(Listeners::Latch.as_str(), "latch");
/// assert_eq!(Listeners::Nobody.to_string(), "nobody");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Listeners {
    /// Neither channel has subscribers: the key alone cannot tell.
    Nobody,
    /// Only the count-down latch channel has: a latch with waiters.
    Latch,
    /// Only the semaphore channel has: a semaphore with waiters.
    Semaphore,
    /// Both have (two applications that read the same key differently).
    Both,
}

impl Listeners {
    /// The short name: `nobody`, `latch`, `semaphore` or `both`.
    ///
    /// ```
    /// assert_eq!(redisson_lock::inspect::Listeners::Both.as_str(), "both");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            Listeners::Nobody => "nobody",
            Listeners::Latch => "latch",
            Listeners::Semaphore => "semaphore",
            Listeners::Both => "both",
        }
    }
}

impl std::fmt::Display for Listeners {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A snapshot of a count stored under one key.
///
/// Redisson's `RCountDownLatch` and `RSemaphore` (available permits) both keep a plain decimal
/// integer string at the name, so the key alone cannot tell which of the two it is (nor tell
/// either from any other integer an application stores). The subscribers of each one's channel
/// say which kind has waiters ([`listeners`](LatchInfo::listeners)).
///
/// ```no_run
/// # async fn demo(mut conn: redisson_lock::Connection) -> redisson_lock::Result<()> {
/// let info = redisson_lock::inspect::inspect_latch(&mut conn, "batch:7").await?;
/// if info.exists {
///     println!("count {} ({} listening)", info.count, info.listeners());
/// }
/// # Ok(()) }
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct LatchInfo {
    /// The count's Redis key.
    pub key: String,
    /// Whether the key exists (a latch is deleted when its count reaches zero).
    pub exists: bool,
    /// The count: 0 when the key is absent. Signed: a semaphore's permits can be reduced below
    /// zero; a latch's count never is.
    pub count: i64,
    /// The key's TTL: [`Ttl::NoExpiry`] as Redisson leaves it, [`Ttl::NotLocked`] when absent.
    pub ttl: Ttl,
    /// Subscribers of [`count_down_latch_channel`].
    pub latch_channel: ChannelSubscribers,
    /// Subscribers of [`semaphore_channel`].
    pub semaphore_channel: ChannelSubscribers,
}

impl LatchInfo {
    /// Which channels have subscribers.
    ///
    /// ```no_run
    /// # async fn demo(mut conn: redisson_lock::Connection) -> redisson_lock::Result<()> {
    /// use redisson_lock::inspect::{inspect_latch, Listeners};
    /// if inspect_latch(&mut conn, "batch:7").await?.listeners() == Listeners::Latch {
    ///     println!("latch waiters are listening");
    /// }
    /// # Ok(()) }
    /// ```
    pub fn listeners(&self) -> Listeners {
        match (self.latch_channel.total() > 0, self.semaphore_channel.total() > 0) {
            (false, false) => Listeners::Nobody,
            (true, false) => Listeners::Latch,
            (false, true) => Listeners::Semaphore,
            (true, true) => Listeners::Both,
        }
    }
}

/// Reads the count stored under `key` as a count-down latch (or semaphore) keeps it, and the
/// subscribers of both channels.
///
/// Only reads: `TYPE`, then `GET` and `PTTL` in one `MULTI`, then `PUBSUB NUMSUB` and
/// `PUBSUB SHARDNUMSUB` of the two channels. An absent key is a count of 0 (as Redisson's
/// `getCount` says), with `exists: false`.
///
/// # Errors
///
/// [`Error::WrongType`] when `key` holds another Redis type; [`Error::Protocol`] when it holds a
/// string that is not a decimal integer; [`Error::Redis`] for connection errors.
///
/// # Examples
///
/// ```no_run
/// # async fn demo(client: redisson_lock::Client) -> redisson_lock::Result<()> {
/// let info = redisson_lock::inspect::inspect_latch(&mut client.connection(), "batch:7").await?;
/// println!(
///     "count {}, {} latch subscriber(s), {} semaphore subscriber(s)",
///     info.count,
///     info.latch_channel.total(),
///     info.semaphore_channel.total()
/// );
/// # Ok(()) }
/// ```
pub async fn inspect_latch<C>(conn: &mut C, key: &str) -> Result<LatchInfo>
where
    C: ConnectionLike + Send,
{
    if key.is_empty() {
        return Err(Error::InvalidArgument("latch name must not be empty".into()));
    }
    let kind: String = redis::cmd("TYPE")
        .arg(key)
        .query_async(conn)
        .await
        .map_err(|e| map_err(key, e))?;
    if kind != "none" && kind != "string" {
        return Err(Error::WrongType { key: key.to_owned() });
    }
    // the type may have changed since: GET then fails with WRONGTYPE, mapped the same way
    let (value, pttl): (Option<String>, i64) = redis::pipe()
        .atomic()
        .cmd("GET")
        .arg(key)
        .cmd("PTTL")
        .arg(key)
        .query_async(conn)
        .await
        .map_err(|e| map_err(key, e))?;
    let count = match &value {
        None => 0,
        Some(text) => text.parse::<i64>().map_err(|_| {
            Error::Protocol(format!(
                "`{key}` holds `{}`, not a count",
                super::field::shown(text)
            ))
        })?,
    };
    let [latch_channel, semaphore_channel] =
        subscribers(conn, [count_down_latch_channel(key), semaphore_channel(key)]).await?;
    Ok(LatchInfo {
        key: key.to_owned(),
        exists: value.is_some(),
        count,
        ttl: if value.is_some() {
            ttl_of(pttl)
        } else {
            Ttl::NotLocked
        },
        latch_channel,
        semaphore_channel,
    })
}
