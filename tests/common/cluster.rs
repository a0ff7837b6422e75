//! A Redis Cluster of real redis-server processes on free loopback ports, joined with
//! `redis-cli --cluster create` (stopped with its nodes).

use std::process::Command;
use std::time::Duration;

use super::{eventually, RedisServer};

/// `masters` masters with `replicas` replicas each; `nodes[..masters]` are the masters as
/// `redis-cli` assigned them (it takes the first `masters` addresses as masters).
pub struct Cluster {
    pub nodes: Vec<RedisServer>,
    pub masters: usize,
}

impl Cluster {
    /// Starts and joins the nodes, and waits until every node reports `cluster_state:ok` and
    /// knows every other node.
    pub async fn start(masters: usize, replicas: usize) -> Cluster {
        Self::start_with(masters, replicas, |_| Vec::new()).await
    }

    /// [`start`](Self::start) with more arguments for node `i` (e.g. its own TLS port).
    pub async fn start_with(
        masters: usize,
        replicas: usize,
        extra: impl Fn(usize) -> Vec<String>,
    ) -> Cluster {
        let n = masters * (1 + replicas);
        let nodes: Vec<RedisServer> = (0..n)
            .map(|i| {
                let mut args: Vec<String> = ["--cluster-enabled", "yes", "--cluster-node-timeout", "5000"]
                    .iter()
                    .map(|s| s.to_string())
                    .collect();
                args.extend(extra(i));
                let args: Vec<&str> = args.iter().map(String::as_str).collect();
                RedisServer::start_with(&args)
            })
            .collect();
        let addrs: Vec<String> = nodes.iter().map(|n| format!("127.0.0.1:{}", n.port)).collect();
        let replicas_arg = replicas.to_string();
        let out = Command::new("redis-cli")
            .args(["--cluster", "create"])
            .args(&addrs)
            .args(["--cluster-replicas", replicas_arg.as_str(), "--cluster-yes"])
            .output()
            .expect("redis-cli (from the redis-server package) runs");
        assert!(
            out.status.success(),
            "cluster create failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let cluster = Cluster { nodes, masters };
        cluster.wait_ok().await;
        cluster
    }

    /// Every node's URL (masters first).
    pub fn urls(&self) -> Vec<String> {
        self.nodes.iter().map(|n| n.url()).collect()
    }

    /// `host:port` of every node (masters first).
    pub fn addrs(&self) -> Vec<String> {
        self.nodes
            .iter()
            .map(|n| format!("127.0.0.1:{}", n.port))
            .collect()
    }

    /// Waits until every node reports `cluster_state:ok`, all slots and every node, and sees
    /// every replica as a replica (the roles `redis-cli` gave spread by gossip: a master that
    /// still takes a replica for a master denies it its vote, and a `CLUSTER FAILOVER` times out;
    /// Redis 6 gossips slowly enough for a test to get there first).
    pub async fn wait_ok(&self) {
        let want = format!("cluster_known_nodes:{}", self.nodes.len());
        let replicas = self.nodes.len() - self.masters;
        for n in &self.nodes {
            let c = n.conn().await;
            eventually(Duration::from_secs(30), "cluster_state:ok everywhere", || {
                let mut c = c.clone();
                let want = want.clone();
                async move {
                    let info: String = redis::cmd("CLUSTER")
                        .arg("INFO")
                        .query_async(&mut c)
                        .await
                        .unwrap_or_default();
                    let nodes: String = redis::cmd("CLUSTER")
                        .arg("NODES")
                        .query_async(&mut c)
                        .await
                        .unwrap_or_default();
                    let seen_replicas = nodes
                        .lines()
                        .filter(|l| l.split_whitespace().nth(2).is_some_and(|f| f.contains("slave")))
                        .count();
                    info.contains("cluster_state:ok")
                        && info.contains("cluster_slots_ok:16384")
                        && info.contains(&want)
                        && seen_replicas == replicas
                }
            })
            .await;
        }
    }

    /// Whether these servers have sharded pub/sub (Redis 7.0+; a Redis 6 cluster has only
    /// classic pub/sub, which the client's `PublishMode::Auto` then picks).
    pub async fn sharded_pubsub(&self) -> bool {
        super::sharded_pubsub(&self.nodes[0].url()).await
    }

    /// Sum over all nodes of `PUBSUB NUMSUB channel` (classic subscribers are counted on the
    /// node they subscribed on) or `PUBSUB SHARDNUMSUB channel` (sharded: the slot's nodes;
    /// 0 on servers without sharded pub/sub).
    pub async fn numsub(&self, channel: &str, sharded: bool) -> i64 {
        let mut total = 0;
        for n in &self.nodes {
            let mut c = n.conn().await;
            let reply = redis::cmd("PUBSUB")
                .arg(if sharded { "SHARDNUMSUB" } else { "NUMSUB" })
                .arg(channel)
                .query_async::<Vec<redis::Value>>(&mut c)
                .await;
            let reply = match reply {
                Ok(r) => r,
                Err(e) if sharded && super::is_unknown_command(&e) => return 0,
                Err(e) => panic!("PUBSUB (SHARD)NUMSUB: {e}"),
            };
            if let Some(redis::Value::Int(k)) = reply.get(1) {
                total += k;
            }
        }
        total
    }
}

/// What a cluster proxy or a serverless endpoint looks like to a client: one address in front of
/// a Redis Cluster, which refuses a script or multi-key command over several hash slots
/// (`CROSSSLOT`). Stood in for by one cluster-enabled redis-server that owns all 16384 slots
/// (extra `--option value` arguments as for [`RedisServer::start_with`]), reached by a plain URL;
/// returned once it reports `cluster_state:ok`.
pub async fn one_address(extra: &[&str]) -> RedisServer {
    let mut args = vec!["--cluster-enabled", "yes"];
    args.extend_from_slice(extra);
    let s = RedisServer::start_with(&args);
    let mut c = s.conn().await;
    // ADDSLOTSRANGE is Redis 7.0+; before it, every slot by number
    let range: redis::RedisResult<()> = redis::cmd("CLUSTER")
        .arg("ADDSLOTSRANGE")
        .arg(0)
        .arg(16383)
        .query_async(&mut c)
        .await;
    if range.is_err() {
        let mut add = redis::cmd("CLUSTER");
        add.arg("ADDSLOTS");
        for slot in 0..16384 {
            add.arg(slot);
        }
        let _: () = add.query_async(&mut c).await.expect("CLUSTER ADDSLOTS 0..16383");
    }
    eventually(Duration::from_secs(30), "the node owns every slot", || {
        let mut c = c.clone();
        async move {
            let info: String = redis::cmd("CLUSTER")
                .arg("INFO")
                .query_async(&mut c)
                .await
                .unwrap_or_default();
            info.contains("cluster_state:ok") && info.contains("cluster_slots_ok:16384")
        }
    })
    .await;
    s
}
