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
    let classic = numsub(conn, "NUMSUB", &channels).await.map_err(Error::Redis)?;
    let sharded = match numsub(conn, "SHARDNUMSUB", &channels).await {
        Ok(counts) => Some(counts),
        Err(e) if e.is_io_error() || e.is_connection_dropped() || e.is_timeout() => {
            return Err(Error::Redis(e))
        }
        Err(_) => None,
    };
    // `numsub` gives one count per channel, in order
    let mut classic = classic.into_iter();
    let mut sharded = sharded.map(Vec::into_iter);
    Ok(channels.map(|channel| ChannelSubscribers {
        channel,
        classic: classic.next().unwrap_or(0),
        sharded: sharded.as_mut().and_then(Iterator::next),
    }))
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
    // a flat array `channel, count, ...` from one server; a map from a cluster connection,
    // which sums the replies of every node
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
