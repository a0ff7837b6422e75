//! The connection subscriptions are made on, which commands it uses (classic,
//! sharded or both), and one SUBSCRIBE or UNSUBSCRIBE sent on it.

use std::sync::Arc;
use std::time::Duration;

use redis::aio::ConnectionManager;
use redis::cluster_async::ClusterConnection;
use redis::ProtocolVersion;

use super::channel::Change;
use super::health::Failure;
use super::push::{push_handler, Pushes};
use super::Hub;
use crate::config::Config;
use crate::error::{Error, Result};

/// A bound on one SUBSCRIBE/UNSUBSCRIBE should the connection's own response timeout (the
/// client's command timeout) not end it first.
const COMMAND_CAP: Duration = Duration::from_secs(10);

/// The pub/sub commands of one client, resolved once from [`PublishMode`](crate::PublishMode)
/// and the deployment when the client is built: unlock scripts publish and waiters subscribe
/// the same way.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PubSubCommands {
    /// `PUBLISH` / `SUBSCRIBE`.
    Classic,
    /// `SPUBLISH` / `SSUBSCRIBE` (cluster only).
    Sharded,
    /// Both of the above (cluster only): publish on both channels, listen on both.
    Both,
}

impl PubSubCommands {
    /// The scripts' "publish mode" argument (lua/common/notify.lua).
    pub(crate) fn script_arg(self) -> &'static str {
        match self {
            PubSubCommands::Classic => "PUBLISH",
            PubSubCommands::Sharded => "SPUBLISH",
            PubSubCommands::Both => "BOTH",
        }
    }

    pub(super) fn classic(self) -> bool {
        matches!(self, PubSubCommands::Classic | PubSubCommands::Both)
    }

    pub(super) fn sharded(self) -> bool {
        matches!(self, PubSubCommands::Sharded | PubSubCommands::Both)
    }
}

/// A RESP3 cluster connection seeded by `client`'s address (and credentials) that delivers
/// pushes to the hub; it routes SSUBSCRIBE to the node serving a channel's slot and
/// re-subscribes after reconnects and slot moves.
pub(crate) async fn cluster_conn(
    client: &redis::Client,
    config: &Config,
    pushes: Pushes,
) -> Result<PubSubConn> {
    let cc = redis::cluster::ClusterClientBuilder::new([client.get_connection_info().clone()])
        .use_protocol(ProtocolVersion::RESP3)
        .push_sender(push_handler(pushes))
        .response_timeout(config.command_timeout)
        .connection_timeout(config.connect_timeout)
        .build()
        .map_err(|e| Error::InvalidArgument(format!("bad cluster pub/sub configuration: {e}")))?;
    Ok(PubSubConn::Cluster(cc.get_async_connection().await?))
}

/// The connection subscriptions are made on.
#[derive(Clone)]
pub(crate) enum PubSubConn {
    Manager(ConnectionManager),
    Cluster(ClusterConnection),
    /// The current master of a Sentinel service (moves with it).
    Sentinel(Arc<crate::sentinel::SentinelLink>),
    /// A modelled server, for the model checks of the hub's channel state.
    #[cfg(all(test, redisson_lock_loom))]
    Model(Arc<super::loom_models::Server>),
}

impl PubSubConn {
    /// The connection held keys are read on so that the server tracks them for it (its pushes
    /// reach the hub): a single server's RESP3 connection, the current Sentinel master's (it
    /// changes when the master moves: ask again for each use), or the RESP3 cluster connection
    /// (one connection per node).
    pub(crate) fn tracking_conn(&self) -> Option<crate::conn::Connection> {
        match self {
            PubSubConn::Manager(c) => Some(crate::conn::Connection::Manager(c.clone())),
            PubSubConn::Sentinel(link) => link.pubsub_conn().map(crate::conn::Connection::Manager),
            PubSubConn::Cluster(c) => Some(crate::conn::Connection::Cluster(c.clone())),
            #[cfg(all(test, redisson_lock_loom))]
            PubSubConn::Model(_) => None,
        }
    }
}

impl Hub {
    /// One SUBSCRIBE or UNSUBSCRIBE of `name` with the hub's commands ([`PubSubCommands::Both`]: the classic
    /// command, then the sharded one).
    pub(super) async fn command(&self, change: Change, name: &str) -> std::result::Result<(), Failure> {
        let Some(conn) = self.conn.clone() else {
            return Ok(());
        };
        #[cfg(all(test, redisson_lock_loom))]
        if let PubSubConn::Model(server) = &conn {
            return server.command(&change);
        }
        let mut classic_done = false;
        if self.commands.classic() {
            self.one(&conn, &change, false, name).await?;
            classic_done = true;
        }
        if self.commands.sharded() {
            let res = self.one(&conn, &change, true, name).await;
            return match res {
                Err(f) if classic_done => Err(Failure::Partial(Box::new(f))),
                other => other,
            };
        }
        Ok(())
    }

    async fn one(
        &self,
        conn: &PubSubConn,
        change: &Change,
        sharded: bool,
        name: &str,
    ) -> std::result::Result<(), Failure> {
        let fut = async move {
            match (conn.clone(), change, sharded) {
                (PubSubConn::Cluster(mut c), Change::Subscribe, true) => c.ssubscribe(name).await,
                (PubSubConn::Cluster(mut c), Change::Unsubscribe, true) => c.sunsubscribe(name).await,
                (PubSubConn::Cluster(mut c), Change::Subscribe, false) => c.subscribe(name).await,
                (PubSubConn::Cluster(mut c), Change::Unsubscribe, false) => c.unsubscribe(name).await,
                // a single node (or a sentinel master): the client resolves every mode to classic there
                (PubSubConn::Manager(mut c), Change::Subscribe, _) => c.subscribe(name).await,
                (PubSubConn::Manager(mut c), Change::Unsubscribe, _) => c.unsubscribe(name).await,
                (PubSubConn::Sentinel(link), Change::Subscribe, _) => link.subscribe(name).await,
                (PubSubConn::Sentinel(link), Change::Unsubscribe, _) => link.unsubscribe(name).await,
                #[cfg(all(test, redisson_lock_loom))]
                (PubSubConn::Model(_), ..) => unreachable!("the modelled server answers in `command`"),
            }
        };
        match tokio::time::timeout(COMMAND_CAP, fut).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(Failure::Redis(e)),
            Err(_) => Err(Failure::Timeout(COMMAND_CAP)),
        }
    }
}
