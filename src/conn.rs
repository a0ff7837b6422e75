//! The command connection: whatever the user gave us, behind one `ConnectionLike`.

use redis::aio::{ConnectionLike, ConnectionManager, MultiplexedConnection};
use redis::cluster_async::ClusterConnection;
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
        }
    }

    fn get_db(&self) -> i64 {
        match self {
            Connection::Manager(c) => c.get_db(),
            Connection::Multiplexed(c) => c.get_db(),
            Connection::Cluster(c) => c.get_db(),
        }
    }
}
