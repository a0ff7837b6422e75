//! Connection variants against real redis-server processes: password + db in the URL, watchdog
//! batching, and a Redis Cluster (three loopback nodes) with sharded pub/sub.

mod common;

use std::process::Command;
use std::time::{Duration, Instant};

use common::{eventually, RedisServer};
use redis::AsyncCommands;
use redisson_lock::{Client, Config, PublishMode, Unlocked};

#[tokio::test]
async fn password_and_database_from_the_url() {
    let s = RedisServer::start_with(&["--requirepass", "s3cret"]);
    let url = format!("redis://:s3cret@127.0.0.1:{}/3", s.port);
    let client = Client::connect(&url).await.unwrap();
    let lock = client.lock("in-db-3").unwrap();
    let g = lock.lock().await.unwrap();
    let mut db3 = redis::Client::open(url.as_str())
        .unwrap()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    assert_eq!(
        db3.exists::<_, i64>("in-db-3").await.unwrap(),
        1,
        "the lock lives in db 3"
    );
    let mut db0 = redis::Client::open(format!("redis://:s3cret@127.0.0.1:{}/0", s.port))
        .unwrap()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    assert_eq!(db0.exists::<_, i64>("in-db-3").await.unwrap(), 0);
    // waiting works through the authenticated pub/sub connection too
    let other = lock.with_owner(2);
    let w = tokio::spawn(async move { other.lock().await.unwrap().unlock().await.unwrap() });
    eventually(Duration::from_secs(5), "the waiter subscribed", || {
        let c = client.clone();
        async move { c.stats().waiters == 1 }
    })
    .await;
    let t = Instant::now();
    g.unlock().await.unwrap();
    tokio::time::timeout(Duration::from_secs(2), w)
        .await
        .unwrap()
        .unwrap();
    assert!(t.elapsed() < Duration::from_millis(500));

    let wrong = Client::connect(&format!("redis://:wrong@127.0.0.1:{}/", s.port)).await;
    assert!(matches!(wrong, Err(redisson_lock::Error::Redis(_))), "{wrong:?}");
}

#[tokio::test]
async fn watchdog_sends_at_most_batch_size_keys_per_call() {
    let s = RedisServer::start();
    let config = Config::default()
        .lock_watchdog_timeout(Duration::from_millis(900))
        .watchdog_batch_size(2);
    let client = Client::builder()
        .url(s.url())
        .config(config)
        .build()
        .await
        .unwrap();
    let mut raw = s.conn().await;
    let mut guards = Vec::new();
    for i in 0..5 {
        guards.push(client.lock(&format!("batch:{i}")).unwrap().lock().await.unwrap());
    }
    let _: () = redis::cmd("CONFIG")
        .arg("RESETSTAT")
        .query_async(&mut raw)
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(1000)).await; // about three renewal periods
    let info: String = redis::cmd("INFO")
        .arg("commandstats")
        .query_async(&mut raw)
        .await
        .unwrap();
    let calls: u64 = info
        .lines()
        .find(|l| l.starts_with("cmdstat_evalsha:"))
        .and_then(|l| l.split("calls=").nth(1))
        .and_then(|v| v.split(',').next())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    // 5 locks in batches of 2 → 3 calls per period
    assert!(calls >= 6, "renewals ran: {calls} calls");
    assert_eq!(calls % 3, 0, "3 calls per period (2 + 2 + 1 keys), got {calls}");
    for g in guards {
        g.unlock().await.unwrap();
    }
}

/// Three cluster nodes on free loopback ports, joined with `redis-cli --cluster create`.
struct Cluster {
    nodes: Vec<RedisServer>,
}

impl Cluster {
    fn start() -> Cluster {
        let nodes: Vec<RedisServer> = (0..3)
            .map(|_| RedisServer::start_with(&["--cluster-enabled", "yes", "--cluster-node-timeout", "5000"]))
            .collect();
        let addrs: Vec<String> = nodes.iter().map(|n| format!("127.0.0.1:{}", n.port)).collect();
        let out = Command::new("redis-cli")
            .args(["--cluster", "create"])
            .args(&addrs)
            .args(["--cluster-replicas", "0", "--cluster-yes"])
            .output()
            .expect("redis-cli (from the redis-server package) runs");
        assert!(
            out.status.success(),
            "cluster create failed: {}",
            String::from_utf8_lossy(&out.stdout)
        );
        Cluster { nodes }
    }

    fn urls(&self) -> Vec<String> {
        self.nodes.iter().map(|n| n.url()).collect()
    }

    async fn wait_ok(&self) {
        for n in &self.nodes {
            let mut c = n.conn().await;
            eventually(Duration::from_secs(20), "cluster_state:ok", || {
                let mut c = c.clone();
                async move {
                    let info: String = redis::cmd("CLUSTER")
                        .arg("INFO")
                        .query_async(&mut c)
                        .await
                        .unwrap();
                    info.contains("cluster_state:ok")
                }
            })
            .await;
            let _ = &mut c;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cluster_with_sharded_pubsub_and_per_slot_renewal() {
    let cluster = Cluster::start();
    cluster.wait_ok().await;
    let config = Config::default().lock_watchdog_timeout(Duration::from_millis(900));
    let client = Client::builder()
        .cluster(cluster.urls())
        .config(config.clone())
        .build()
        .await
        .unwrap();
    let waiter_client = Client::builder()
        .cluster(cluster.urls())
        .config(config)
        .build()
        .await
        .unwrap();
    assert!(
        format!("{client:?}").contains("SPUBLISH"),
        "Auto picks sharded pub/sub on a Redis 7 cluster: {client:?}"
    );

    // locks spread over all three nodes stay alive under per-slot batched renewal
    let mut guards = Vec::new();
    for i in 0..12 {
        guards.push(client.lock(&format!("c:{i}")).unwrap().lock().await.unwrap());
    }
    tokio::time::sleep(Duration::from_millis(2700)).await; // 3x the watchdog timeout
    for g in &guards {
        assert!(g.is_held(), "{} lost", g.key());
        assert!(client.lock(g.key()).unwrap().is_locked().await.unwrap());
    }

    // a waiter on another client is woken by SPUBLISH through SSUBSCRIBE
    let wl = waiter_client.lock("c:0").unwrap();
    let w = tokio::spawn(async move {
        let g = wl.lock().await.unwrap();
        let at = Instant::now();
        g.unlock().await.unwrap();
        at
    });
    eventually(Duration::from_secs(5), "the waiter subscribed", || {
        let c = waiter_client.clone();
        async move { c.stats().waiters == 1 }
    })
    .await;
    let released = Instant::now();
    for g in guards {
        g.unlock().await.unwrap();
    }
    let acquired = tokio::time::timeout(Duration::from_secs(5), w)
        .await
        .unwrap()
        .unwrap();
    assert!(
        acquired.duration_since(released) < Duration::from_millis(500),
        "woken, not polled"
    );
    eventually(Duration::from_secs(5), "no waiter left", || {
        let c = waiter_client.clone();
        async move { c.stats().channels == 0 }
    })
    .await;

    // forcing classic pub/sub also works (both sides must agree, as with Redisson)
    let classic = Client::builder()
        .cluster(cluster.urls())
        .config(Config::default().publish_mode(PublishMode::Classic))
        .build()
        .await
        .unwrap();
    let g = classic.lock("c:classic").unwrap().lock().await.unwrap();
    g.unlock().await.unwrap();

    // every kind works in a cluster: its helper keys share the lock's slot (no CROSSSLOT)
    let (token, g) = client
        .fenced_lock("c:fenced")
        .unwrap()
        .lock_and_get_token()
        .await
        .unwrap();
    assert_eq!((token, g.reenter().await.unwrap().token()), (1, 2));
    assert_eq!(
        client.fenced_lock("c:fenced").unwrap().get_token().await.unwrap(),
        Some(2)
    );
    let s = client.spin_lock("c:spin").unwrap().lock().await.unwrap();
    let n = client.non_reentrant_lock("c:nr").unwrap().lock().await.unwrap();
    let rw = client.read_write_lock("c:rw").unwrap();
    let w = rw.write_lock().lock().await.unwrap();
    let r = w.downgrade().await.unwrap();
    assert_eq!(r.unlock().await.unwrap(), Unlocked::Released);
    assert_eq!(n.unlock().await.unwrap(), Unlocked::Released);
    assert_eq!(s.unlock().await.unwrap(), Unlocked::Released);
    drop(g); // the re-entered fenced guard went with the temporary above; this releases the last
    eventually(Duration::from_secs(5), "every kind's lock is gone", || {
        let c = client.clone();
        async move {
            let mut gone = true;
            for k in ["c:fenced", "c:spin", "c:nr", "c:rw"] {
                gone &= !c.lock(k).unwrap().is_locked().await.unwrap();
            }
            gone
        }
    })
    .await;
}
