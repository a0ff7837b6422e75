//! Redis Cluster awareness: `--url` names one node, but a cluster's keys are spread over all its
//! masters, so `list` asks each master (SCAN only sees the keys of the node it runs on).

use redis::aio::ConnectionLike;
use redis::{ConnectionAddr, ConnectionInfo};
use redisson_lock::inspect::{self, LockInfo};

use crate::Failure;

/// Every lock whose name matches `pattern`: on a single server, SCAN of that server; in a cluster,
/// SCAN of every master (a lock and its helper keys share a slot, so each master can describe the
/// locks it serves by itself), merged and sorted by name.
pub(crate) async fn scan_locks<C>(url: &str, conn: &mut C, pattern: &str) -> Result<Vec<LockInfo>, Failure>
where
    C: ConnectionLike + Send,
{
    let seed = redis::Client::open(url)?.get_connection_info().clone();
    let Some(masters) = masters(conn, &seed).await? else {
        return Ok(inspect::scan_locks(conn, pattern).await?);
    };
    let mut all = Vec::new();
    for node in masters {
        let where_ = describe_addr(node.addr());
        let mut c = redis::Client::open(node)?
            .get_multiplexed_async_connection()
            .await
            .map_err(|e| Failure(format!("cannot connect to cluster master {where_}: {e}")))?;
        all.extend(inspect::scan_locks(&mut c, pattern).await?);
    }
    all.sort_by(|a, b| a.key.cmp(&b.key));
    Ok(all)
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
