//! The command connection: whatever the user gave us, behind one `ConnectionLike`.

use redis::aio::{ConnectionLike, ConnectionManager, MultiplexedConnection};
use std::collections::HashMap;

use redis::cluster_async::ClusterConnection;
use redis::cluster_routing::Slot;
use redis::{Cmd, Pipeline, RedisFuture, Value};

/// A connection for lock commands.
///
/// Built from a URL by [`Client::connect`](crate::Client::connect), or from a connection the
/// application already has (`From` impls), see [`ClientBuilder::connection`](crate::ClientBuilder::connection).
///
/// # Examples
///
/// ```no_run
/// # async fn demo() -> redis::RedisResult<()> {
/// let client = redis::Client::open("redis://127.0.0.1/")?;
/// let manager = client.get_connection_manager().await?;
/// let conn = redisson_lock::Connection::from(manager);
/// # let _ = conn; Ok(()) }
/// ```
#[derive(Clone)]
#[non_exhaustive]
pub enum Connection {
    /// A reconnecting connection manager (what [`Client::connect`](crate::Client::connect) uses).
    Manager(ConnectionManager),
    /// A multiplexed connection; it does not reconnect by itself.
    Multiplexed(MultiplexedConnection),
    /// A Redis Cluster connection.
    Cluster(ClusterConnection),
    /// The master of a Sentinel-monitored service, followed across failovers (built by
    /// [`ClientBuilder::sentinel`](crate::ClientBuilder::sentinel)).
    Sentinel(crate::sentinel::SentinelConnection),
}

impl Connection {
    pub(crate) fn is_cluster(&self) -> bool {
        matches!(self, Connection::Cluster(_))
    }
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Connection::Manager(_) => "Connection::Manager",
            Connection::Multiplexed(_) => "Connection::Multiplexed",
            Connection::Cluster(_) => "Connection::Cluster",
            Connection::Sentinel(_) => "Connection::Sentinel",
        })
    }
}

impl From<ConnectionManager> for Connection {
    fn from(c: ConnectionManager) -> Self {
        Connection::Manager(c)
    }
}

impl From<MultiplexedConnection> for Connection {
    fn from(c: MultiplexedConnection) -> Self {
        Connection::Multiplexed(c)
    }
}

impl From<ClusterConnection> for Connection {
    fn from(c: ClusterConnection) -> Self {
        Connection::Cluster(c)
    }
}

impl ConnectionLike for Connection {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        match self {
            Connection::Manager(c) => c.req_packed_command(cmd),
            Connection::Multiplexed(c) => c.req_packed_command(cmd),
            Connection::Cluster(c) => c.req_packed_command(cmd),
            Connection::Sentinel(c) => c.req_packed_command(cmd),
        }
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        pipeline: &'a Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        match self {
            Connection::Manager(c) => c.req_packed_commands(pipeline, offset, count),
            Connection::Multiplexed(c) => c.req_packed_commands(pipeline, offset, count),
            Connection::Cluster(c) => c.req_packed_commands(pipeline, offset, count),
            Connection::Sentinel(c) => c.req_packed_commands(pipeline, offset, count),
        }
    }

    fn get_db(&self) -> i64 {
        match self {
            Connection::Manager(c) => c.get_db(),
            Connection::Multiplexed(c) => c.get_db(),
            Connection::Cluster(c) => c.get_db(),
            Connection::Sentinel(c) => c.get_db(),
        }
    }
}

/// Splits `items` into groups that one pipeline may carry: on a cluster connection one group per
/// hash slot (the pipeline goes to the slot's master), elsewhere a single group. (Whether one
/// *call* may carry keys of several slots is another question: [`crate::slots`].)
pub(crate) fn slot_groups<T>(items: Vec<T>, cluster: bool, key: impl Fn(&T) -> &str) -> Vec<Vec<T>> {
    if items.is_empty() {
        return Vec::new();
    }
    if !cluster {
        return vec![items];
    }
    let mut groups: HashMap<Slot, Vec<T>> = HashMap::new();
    for it in items {
        groups
            .entry(Slot::for_key(key(&it).as_bytes()))
            .or_default()
            .push(it);
    }
    groups.into_values().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pipelines_split_only_on_a_cluster_connection() {
        let keys = vec!["a", "b", "{a}:x", "c"];
        assert_eq!(slot_groups(keys.clone(), false, |k| k), vec![keys.clone()]);
        let groups = slot_groups(keys, true, |k| k);
        for g in &groups {
            let slot = Slot::for_key(g[0]);
            assert!(g.iter().all(|k| Slot::for_key(k) == slot));
        }
        assert!(slot_groups(Vec::<&str>::new(), true, |k| k).is_empty());
    }
}
