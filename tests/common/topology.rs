//! A Sentinel topology of real processes: 1 master, 2 replicas, 3 sentinels (quorum 2).

use std::time::{Duration, Instant};

use redisson_lock::{Client, Config};

use super::{eventually, RedisServer};

pub const MASTER: &str = "locks";

/// A master, two replicas and three sentinels (quorum 2) that know both replicas.
pub struct Topology {
    pub nodes: Vec<RedisServer>,
    pub sentinels: Vec<RedisServer>,
}

impl Topology {
    pub async fn start() -> Topology {
        let master = RedisServer::start();
        let port = master.port.to_string();
        let mut nodes = vec![master];
        for _ in 0..2 {
            nodes.push(RedisServer::start_with(&["--replicaof", "127.0.0.1", &port]));
        }
        let sentinels: Vec<RedisServer> = (0..3)
            .map(|_| RedisServer::start_sentinel(nodes[0].port, MASTER, 2))
            .collect();
        let t = Topology { nodes, sentinels };
        // a failover needs sentinels that see each other and both replicas online
        for s in &t.sentinels {
            let mut c = s.conn().await;
            eventually(
                Duration::from_secs(30),
                "every sentinel knows 2 replicas and 2 other sentinels",
                || {
                    let mut c = c.clone();
                    async move {
                        let replicas: Vec<redis::Value> = redis::cmd("SENTINEL")
                            .arg("REPLICAS")
                            .arg(MASTER)
                            .query_async(&mut c)
                            .await
                            .unwrap_or_default();
                        let peers: Vec<redis::Value> = redis::cmd("SENTINEL")
                            .arg("SENTINELS")
                            .arg(MASTER)
                            .query_async(&mut c)
                            .await
                            .unwrap_or_default();
                        replicas.len() == 2 && peers.len() == 2
                    }
                },
            )
            .await;
            let _: String = redis::cmd("PING").query_async(&mut c).await.unwrap();
        }
        t
    }

    pub fn sentinel_urls(&self) -> Vec<String> {
        self.sentinels.iter().map(|s| s.url()).collect()
    }

    pub async fn client(&self, config: Config) -> Client {
        Client::builder()
            .sentinel(self.sentinel_urls(), MASTER)
            .config(config)
            .build()
            .await
            .expect("sentinel client")
    }

    /// `ROLE` of `n`: "master", "slave", or `None` when it does not answer (a node that changes
    /// role resets its clients' connections).
    pub async fn role(n: &RedisServer) -> Option<String> {
        let client = redis::Client::open(n.url()).ok()?;
        let cfg = redis::AsyncConnectionConfig::new()
            .set_connection_timeout(Some(Duration::from_secs(2)))
            .set_response_timeout(Some(Duration::from_secs(2)));
        let mut c = client
            .get_multiplexed_async_connection_with_config(&cfg)
            .await
            .ok()?;
        let role: Vec<redis::Value> = redis::cmd("ROLE").query_async(&mut c).await.ok()?;
        match role.first() {
            Some(redis::Value::BulkString(b)) => Some(String::from_utf8_lossy(b).into_owned()),
            _ => None,
        }
    }

    /// The first node whose `ROLE` is master, other than `except`.
    pub async fn master_except(&self, except: Option<u16>) -> Option<&RedisServer> {
        for n in &self.nodes {
            if Some(n.port) != except && Self::role(n).await.as_deref() == Some("master") {
                return Some(n);
            }
        }
        None
    }

    /// The node whose `ROLE` is master (the first one, should there be two).
    pub async fn master(&self) -> Option<&RedisServer> {
        self.master_except(None).await
    }

    /// `SENTINEL FAILOVER` through the first sentinel. Returns the promoted node once its `ROLE`
    /// is master, and how long that took; the old master stays a master until Sentinel demotes
    /// it (see [`Topology::wait_demoted`]).
    pub async fn failover(&self) -> (&RedisServer, Duration) {
        let old = self.master().await.expect("a master").port;
        let mut s = self.sentinels[0].conn().await;
        let _: String = redis::cmd("SENTINEL")
            .arg("FAILOVER")
            .arg(MASTER)
            .query_async(&mut s)
            .await
            .expect("SENTINEL FAILOVER");
        let asked = Instant::now();
        let deadline = asked + Duration::from_secs(30);
        loop {
            if let Some(m) = self.master_except(Some(old)).await {
                return (m, asked.elapsed());
            }
            assert!(Instant::now() < deadline, "no new master within 30 s");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Waits until the node on `port` is no longer a master (Sentinel demoted it).
    pub async fn wait_demoted(&self, port: u16) {
        let n = self
            .nodes
            .iter()
            .find(|n| n.port == port)
            .expect("a node of the topology");
        let deadline = Instant::now() + Duration::from_secs(60);
        while Self::role(n).await.as_deref() == Some("master") {
            assert!(
                Instant::now() < deadline,
                "the old master was not demoted within 60 s"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}
