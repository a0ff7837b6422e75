//! Who listens on a channel: the subscriber counts `PUBSUB NUMSUB` and `PUBSUB SHARDNUMSUB` give,
//! shared by the views of counts and semaphores.

use redis::aio::ConnectionLike;

use crate::error::{Error, Result};

/// How many connections subscribe to one channel.
///
/// A count of connections, not of waiters: Redisson and this crate share one subscription per
/// channel among all the waiters of a client.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ChannelSubscribers {
    /// The channel's name.
    pub channel: String,
    /// `PUBSUB NUMSUB`: classic subscribers (`SUBSCRIBE`). On a cluster connection, the sum over
    /// every node.
    pub classic: u64,
    /// `PUBSUB SHARDNUMSUB`: sharded subscribers (`SSUBSCRIBE`, what Redisson and this crate use
    /// in a Redis 7 cluster); `None` when the server refuses the command (before Redis 7, which
    /// has no sharded pub/sub, or an ACL that does not allow it).
    pub sharded: Option<u64>,
}

impl ChannelSubscribers {
    /// Classic and sharded subscribers together.
    ///
    /// ```no_run
    /// # async fn demo(mut conn: redisson_lock::Connection) -> redisson_lock::Result<()> {
    /// let info = redisson_lock::inspect::inspect_latch(&mut conn, "batch").await?;
    /// println!("{} listen on {}", info.latch_channel.total(), info.latch_channel.channel);
    /// # Ok(()) }
    /// ```
    pub fn total(&self) -> u64 {
        self.classic.saturating_add(self.sharded.unwrap_or(0))
    }
}

/// The subscribers of each of `channels` (in their order): `PUBSUB NUMSUB`, then
/// `PUBSUB SHARDNUMSUB`, whose refusal (before Redis 7, or by an ACL) leaves `sharded` unknown
/// rather than zero.
pub(super) async fn subscribers<C, const N: usize>(
    conn: &mut C,
    channels: [String; N],
) -> Result<[ChannelSubscribers; N]>
where
    C: ConnectionLike + Send,
{
    let mut counts = channel_subscribers(conn, &channels).await?.into_iter();
    // one count per channel, in order
    Ok(channels.map(|channel| {
        counts.next().unwrap_or(ChannelSubscribers {
            channel,
            classic: 0,
            sharded: None,
        })
    }))
}

/// How many connections subscribe to each of `channels`, in their order, as the views of counts
/// and semaphores show it (e.g. [`LatchInfo::latch_channel`](super::LatchInfo::latch_channel)).
///
/// Only reads: one `PUBSUB NUMSUB` and one `PUBSUB SHARDNUMSUB` for all the channels. A refused
/// `SHARDNUMSUB` (before Redis 7, or by an ACL) leaves `sharded` unknown (`None`) rather than
/// zero. Both count the subscribers of the node `conn` talks to: classic subscribers may be
/// connected to any node of a Redis Cluster, sharded ones to the node serving the channel's
/// slot. A cluster connection does not add up the nodes' counts (it merges their replies): in a
/// cluster, ask each master with a connection of its own and add the classic counts up (the
/// `redisson-lock` CLI does).
///
/// # Errors
///
/// [`Error::Redis`] when `NUMSUB` fails or the connection does.
///
/// # Examples
///
/// ```no_run
/// # async fn demo(client: redisson_lock::Client) -> redisson_lock::Result<()> {
/// use redisson_lock::inspect::{channel_subscribers, semaphore_channel};
///
/// let channels = [semaphore_channel("sem:a"), semaphore_channel("sem:b")];
/// for c in channel_subscribers(&mut client.connection(), &channels).await? {
///     println!("{}: {} listening", c.channel, c.total());
/// }
/// # Ok(()) }
/// ```
pub async fn channel_subscribers<C>(conn: &mut C, channels: &[String]) -> Result<Vec<ChannelSubscribers>>
where
    C: ConnectionLike + Send,
{
    if channels.is_empty() {
        return Ok(Vec::new());
    }
    let classic = numsub(conn, "NUMSUB", channels).await.map_err(Error::Redis)?;
    let sharded = match numsub(conn, "SHARDNUMSUB", channels).await {
        Ok(counts) => Some(counts),
        Err(e) if e.is_io_error() || e.is_connection_dropped() || e.is_timeout() => {
            return Err(Error::Redis(e))
        }
        Err(_) => None,
    };
    // `numsub` gives one count per channel, in order
    Ok(channels
        .iter()
        .enumerate()
        .map(|(i, channel)| ChannelSubscribers {
            channel: channel.clone(),
            classic: classic.get(i).copied().unwrap_or(0),
            sharded: sharded.as_ref().and_then(|s| s.get(i).copied()),
        })
        .collect())
}

/// `PUBSUB <sub> <channels...>`: the subscriber count of each channel, in their order.
async fn numsub<C>(conn: &mut C, sub: &str, channels: &[String]) -> redis::RedisResult<Vec<u64>>
where
    C: ConnectionLike + Send,
{
    let mut cmd = redis::cmd("PUBSUB");
    cmd.arg(sub);
    for c in channels {
        cmd.arg(c);
    }
    // a flat array `channel, count, ...` (or a map, over RESP3); a channel named twice is
    // counted once per mention
    let pairs: Vec<(String, u64)> = cmd.query_async(conn).await?;
    Ok(channels
        .iter()
        .map(|ch| {
            pairs
                .iter()
                .filter(|(c, _)| c == ch)
                .map(|(_, n)| *n)
                .sum::<u64>()
        })
        .collect())
}
