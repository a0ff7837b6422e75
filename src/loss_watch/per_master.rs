//! Commands a cluster's tracking takes to each master, not to a key's slot: the connection ids,
//! `CLIENT TRACKING` and `CLIENT TRACKINGINFO` are per connection, and a cluster connection has
//! one connection per master. Elsewhere (one server) a call is sent as it is.

use std::time::Duration;

use redis::cluster_routing::{MultipleNodeRoutingInfo, Route, RoutingInfo, SingleNodeRoutingInfo, SlotAddr};
use redis::{Cmd, Value};

use crate::conn::Connection;
use crate::error::{Error, Result};
use crate::script;

/// `cmd` on every master: each master's address (`host:port`) and its reply (an error reply
/// of one master is its `Value::ServerError`). One server answers as `""`.
pub(super) async fn ask(conn: &Connection, cmd: &Cmd, timeout: Duration) -> Result<Vec<(String, Value)>> {
    let Connection::Cluster(cc) = conn else {
        return Ok(vec![(
            String::new(),
            script::cmd::<Value>(conn, timeout, "", cmd).await?,
        )]);
    };
    let mut c = cc.clone();
    let all = RoutingInfo::MultiNode((MultipleNodeRoutingInfo::AllMasters, None));
    let reply = tokio::time::timeout(timeout, c.route_command(cmd.clone(), all))
        .await
        .map_err(|_| Error::CommandTimeout(timeout))?
        .map_err(|e| Error::from_request("", e, timeout))?;
    let pairs = super::map_pairs(&reply)
        .ok_or_else(|| Error::Protocol(format!("a command to every master answered {reply:?}")))?;
    pairs
        .into_iter()
        .map(|(node, v)| match node {
            Value::BulkString(b) => Ok((String::from_utf8_lossy(b).into_owned(), v.clone())),
            Value::SimpleString(s) => Ok((s.clone(), v.clone())),
            other => Err(Error::Protocol(format!("a master named {other:?}"))),
        })
        .collect()
}

/// `cmd` on the master at `addr` (as [`ask`] names it).
pub(super) async fn at(conn: &Connection, addr: &str, cmd: &Cmd, timeout: Duration) -> Result<Value> {
    let Connection::Cluster(cc) = conn else {
        return script::cmd::<Value>(conn, timeout, "", cmd).await;
    };
    let (host, port) = addr
        .rsplit_once(':')
        .and_then(|(h, p)| Some((h.to_owned(), p.parse::<u16>().ok()?)))
        .ok_or_else(|| Error::Protocol(format!("a master's address `{addr}`")))?;
    let to = RoutingInfo::SingleNode(SingleNodeRoutingInfo::ByAddress { host, port });
    route(cc, cmd, to, timeout).await
}

/// `cmd` on the master serving `key`'s slot.
pub(super) async fn at_key(conn: &Connection, key: &str, cmd: &Cmd, timeout: Duration) -> Result<Value> {
    let Connection::Cluster(cc) = conn else {
        return script::cmd::<Value>(conn, timeout, key, cmd).await;
    };
    let to = RoutingInfo::SingleNode(SingleNodeRoutingInfo::SpecificNode(Route::with_key(
        key,
        SlotAddr::Master,
    )));
    route(cc, cmd, to, timeout).await
}

async fn route(
    cc: &redis::cluster_async::ClusterConnection,
    cmd: &Cmd,
    to: RoutingInfo,
    timeout: Duration,
) -> Result<Value> {
    let mut c = cc.clone();
    match tokio::time::timeout(timeout, c.route_command(cmd.clone(), to))
        .await
        .map_err(|_| Error::CommandTimeout(timeout))?
    {
        // one node's error reply may come back as a value: it is an error all the same
        Ok(Value::ServerError(e)) => Err(Error::Redis(e.into())),
        Ok(v) => Ok(v),
        Err(e) => Err(Error::from_request("", e, timeout)),
    }
}
