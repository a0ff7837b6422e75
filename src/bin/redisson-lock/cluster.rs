//! Redis Cluster awareness: `--url` names one node, but a cluster's keys are spread over all its
//! masters, so `list` asks each master (SCAN only sees the keys of the node it runs on).

use redis::aio::{ConnectionLike, MultiplexedConnection};
use redis::{ConnectionAddr, ConnectionInfo};
use redisson_lock::inspect::{self, ChannelSubscribers, LockInfo, Synchronizer};

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
pub(crate) async fn scan<C>(
    url: &str,
    conn: &mut C,
    pattern: &str,
    synchronizers: bool,
) -> Result<Found, Failure>
where
    C: ConnectionLike + Send,
{
    let seed = redis::Client::open(url)?.get_connection_info().clone();
    let Some(masters) = masters(conn, &seed).await? else {
        return scan_node(conn, pattern, synchronizers).await;
    };
    let mut all = Found::default();
    let mut conns = Vec::new();
    for node in masters {
        let where_ = describe_addr(node.addr());
        let mut c = redis::Client::open(node)?
            .get_multiplexed_async_connection()
            .await
            .map_err(|e| Failure(format!("cannot connect to cluster master {where_}: {e}")))?;
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

/// The masters of the cluster `conn` is a node of (reached with `seed`'s credentials and TLS
/// settings), or `None` when it is not a cluster node.
async fn masters<C>(conn: &mut C, seed: &ConnectionInfo) -> Result<Option<Vec<ConnectionInfo>>, Failure>
where
    C: ConnectionLike + Send,
{
    let info: String = redis::cmd("INFO").arg("cluster").query_async(conn).await?;
    if !info.lines().any(|l| l.trim() == "cluster_enabled:1") {
        return Ok(None);
    }
    let nodes: String = redis::cmd("CLUSTER").arg("NODES").query_async(conn).await?;
    let mut out = Vec::new();
    for (host, port) in parse_masters(&nodes) {
        let host = if host.is_empty() {
            // a node that does not know its own address yet reports ":port": it is the seed's host
            match seed.addr() {
                ConnectionAddr::Tcp(h, _) | ConnectionAddr::TcpTls { host: h, .. } => h.clone(),
                _ => continue,
            }
        } else {
            host
        };
        let mut addr = seed.addr().clone();
        match &mut addr {
            ConnectionAddr::Tcp(h, p) | ConnectionAddr::TcpTls { host: h, port: p, .. } => {
                *h = host;
                *p = port;
            }
            other => {
                return Err(Failure(format!(
                    "a cluster node reached over {} (expected TCP)",
                    describe_addr(other)
                )))
            }
        }
        out.push(seed.clone().set_addr(addr));
    }
    if out.is_empty() {
        return Err(Failure("CLUSTER NODES lists no master that serves slots".into()));
    }
    Ok(Some(out))
}

/// (host, port) of every master in a `CLUSTER NODES` reply that serves slots and is not failed.
fn parse_masters(nodes: &str) -> Vec<(String, u16)> {
    let mut out = Vec::new();
    for line in nodes.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        // <id> <ip:port@cport[,hostname]> <flags> <master> <ping> <pong> <epoch> <link> <slot>...
        if f.len() < 9 {
            continue; // no slots (or not a node line)
        }
        let flags: Vec<&str> = f[2].split(',').collect();
        if !flags.contains(&"master")
            || flags
                .iter()
                .any(|x| matches!(*x, "fail" | "handshake" | "noaddr"))
        {
            continue;
        }
        let addr = f[1].split(['@', ',']).next().unwrap_or_default();
        let Some((host, port)) = addr.rsplit_once(':') else {
            continue;
        };
        let Ok(port) = port.parse::<u16>() else { continue };
        let host = host.trim_start_matches('[').trim_end_matches(']');
        out.push((host.to_owned(), port));
    }
    out
}

fn describe_addr(addr: &ConnectionAddr) -> String {
    match addr {
        ConnectionAddr::Tcp(h, p) | ConnectionAddr::TcpTls { host: h, port: p, .. } => format!("{h}:{p}"),
        _ => "a unix socket".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masters_with_slots_only() {
        let nodes = "\
a1 127.0.0.1:7000@17000 myself,master - 0 0 1 connected 0-5460
b2 127.0.0.1:7001@17001 master - 0 1 2 connected 5461-10922
c3 127.0.0.1:7002@17002,host-c master - 0 1 3 connected 10923-16383 [1234->-d4]
d4 127.0.0.1:7003@17003 slave a1 0 1 1 connected
e5 [::1]:7004@17004 master - 0 1 5 connected
f6 127.0.0.1:7005@17005 master,fail - 0 1 6 connected 1-2
g7 :7006@17006 myself,master - 0 0 7 connected 100
";
        assert_eq!(
            parse_masters(nodes),
            vec![
                ("127.0.0.1".to_owned(), 7000),
                ("127.0.0.1".to_owned(), 7001),
                ("127.0.0.1".to_owned(), 7002),
                (String::new(), 7006),
            ]
        );
    }
}
