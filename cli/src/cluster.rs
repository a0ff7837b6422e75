//! Redis Cluster awareness for `list`: a cluster's keys are spread over all its masters, and SCAN
//! only sees the keys of the node it runs on, so `list` asks each master (found at connect,
//! [`Topology::Cluster`]) over a connection of its own.

use redis::aio::{ConnectionLike, MultiplexedConnection};
use redisson_lock::inspect::{self, ChannelSubscribers, LockInfo, Synchronizer};

use crate::target::{addr_str, Session, Target, Topology};
use crate::Failure;

/// Channels per `PUBSUB NUMSUB` when subscribers are counted on every master.
const CHANNELS_PER_CALL: usize = 200;

/// What `list` finds, each sorted by name.
#[derive(Default)]
pub(crate) struct Found {
    pub(crate) locks: Vec<LockInfo>,
    /// Counts and permit-expirable semaphores; empty unless asked for.
    pub(crate) synchronizers: Vec<Synchronizer>,
}

/// Every lock whose name matches `pattern` and, with `synchronizers`, every count and
/// permit-expirable semaphore: on a single server, SCAN of that server; in a cluster, SCAN of
/// every master (a lock and its helper keys, a semaphore and its held permits share a slot, so
/// each master can describe what it serves by itself), merged and sorted by name; the
/// subscribers of the synchronizers' channels are then counted on every master.
pub(crate) async fn scan(
    session: &Session,
    target: &Target,
    pattern: &str,
    synchronizers: bool,
) -> Result<Found, Failure> {
    let Topology::Cluster { masters, .. } = &session.topology else {
        return scan_node(&mut session.client.connection(), pattern, synchronizers).await;
    };
    let mut all = Found::default();
    let mut conns = Vec::new();
    for node in masters {
        let mut c = target
            .raw_conn(node)
            .await
            .map_err(|Failure(m)| Failure(format!("cluster master {}: {m}", addr_str(node.addr()))))?;
        let found = scan_node(&mut c, pattern, synchronizers).await?;
        all.locks.extend(found.locks);
        all.synchronizers.extend(found.synchronizers);
        conns.push(c);
    }
    if !all.synchronizers.is_empty() {
        count_subscribers(&mut conns, &mut all.synchronizers).await?;
    }
    all.locks.sort_by(|a, b| a.key.cmp(&b.key));
    all.synchronizers.sort_by(|a, b| a.key().cmp(b.key()));
    Ok(all)
}

/// What one node (or a non-cluster server) holds.
async fn scan_node<C>(conn: &mut C, pattern: &str, synchronizers: bool) -> Result<Found, Failure>
where
    C: ConnectionLike + Send,
{
    let locks = inspect::scan_locks(conn, pattern).await?;
    let synchronizers = if synchronizers {
        inspect::scan_synchronizers(conn, pattern).await?
    } else {
        Vec::new()
    };
    Ok(Found { locks, synchronizers })
}

/// In a cluster, the subscribers of `channels` (read through the cluster connection, which
/// asks one node) counted again on every master and summed; elsewhere nothing to do.
pub(crate) async fn recount(
    session: &Session,
    target: &Target,
    channels: Vec<&mut ChannelSubscribers>,
) -> Result<(), Failure> {
    let Topology::Cluster { masters, .. } = &session.topology else {
        return Ok(());
    };
    let mut conns = Vec::with_capacity(masters.len());
    for node in masters {
        conns.push(target.raw_conn(node).await?);
    }
    sum_subscribers(&mut conns, channels).await
}

/// Counts the subscribers of the synchronizers' channels on every master, summed: a classic
/// subscriber may be connected to any node (a message reaches every node), a sharded one to the
/// master serving the channel's slot (the others count none). Replicas are not asked.
async fn count_subscribers(
    conns: &mut [MultiplexedConnection],
    found: &mut [Synchronizer],
) -> Result<(), Failure> {
    let mut channels: Vec<&mut ChannelSubscribers> = Vec::new();
    for s in found.iter_mut() {
        match s {
            Synchronizer::Count(c) => {
                channels.push(&mut c.latch_channel);
                channels.push(&mut c.semaphore_channel);
            }
            Synchronizer::ExpirableSemaphore(s) => channels.push(&mut s.channel),
            _ => {}
        }
    }
    sum_subscribers(conns, channels).await
}

/// The subscribers of `channels` on each of `conns`, summed into them.
async fn sum_subscribers(
    conns: &mut [MultiplexedConnection],
    channels: Vec<&mut ChannelSubscribers>,
) -> Result<(), Failure> {
    let names: Vec<String> = channels.iter().map(|c| c.channel.clone()).collect();
    let mut classic = vec![0u64; names.len()];
    let mut sharded: Vec<Option<u64>> = vec![None; names.len()];
    for c in conns.iter_mut() {
        for (n, chunk) in names.chunks(CHANNELS_PER_CALL).enumerate() {
            let counts = inspect::channel_subscribers(c, chunk).await?;
            for (i, count) in counts.into_iter().enumerate() {
                let at = n * CHANNELS_PER_CALL + i;
                if let (Some(total), Some(sum)) = (classic.get_mut(at), sharded.get_mut(at)) {
                    *total += count.classic;
                    if let Some(s) = count.sharded {
                        *sum = Some(sum.unwrap_or(0) + s);
                    }
                }
            }
        }
    }
    for ((c, total), sum) in channels.into_iter().zip(classic).zip(sharded) {
        c.classic = total;
        c.sharded = sum;
    }
    Ok(())
}
