//! Section 6: the cost of `WAIT` (`ReplicaSync::Required`) with one replica on loopback.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::{Duration, Instant};

use redisson_lock::Config;
use serde_json::{json, Value};

use super::Bench;
use crate::common;
use crate::stats::{fmt_ratio, ratio, us, Dist};
use crate::sysinfo::info;
use crate::systems::our_client;
use crate::RUN_START;

impl Bench {
    /// Section 6, the cost of `WAIT` (`ReplicaSync::Required`) on acquire and on acquire + release, with
    /// one healthy replica on loopback: a private master + replica pair (the bench's own server has
    /// none), both clients in the same run, rounds interleaved.
    pub(crate) async fn replica_sync(&mut self) {
        eprintln!(
            "bench: 6. replica sync / WAIT (at {:.0} s)",
            RUN_START.get().map_or(0.0, |t| t.elapsed().as_secs_f64())
        );
        let master = common::RedisServer::start();
        let _replica =
            common::RedisServer::start_with(&["--replicaof", "127.0.0.1", &master.port.to_string()]);
        let mut m = redis::Client::open(master.url())
            .unwrap()
            .get_connection_manager()
            .await
            .unwrap();
        // wait for the replica's first sync
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let r = info(&mut m, "replication").await;
            if r.get("connected_slaves").map(String::as_str) == Some("1")
                && r.get("slave0").is_some_and(|v| v.contains("state=online"))
            {
                break;
            }
            assert!(Instant::now() < deadline, "the bench replica never came online");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let off = our_client(
            &master.url(),
            Config::default().with_replica_sync(redisson_lock::ReplicaSync::Off),
        )
        .await;
        let req = our_client(
            &master.url(),
            Config::default().with_replica_sync(redisson_lock::ReplicaSync::Required),
        )
        .await;
        let (lo, lr) = (
            off.lock("bench:sync:off").unwrap(),
            req.lock("bench:sync:req").unwrap(),
        );
        for _ in 0..300 {
            lo.lock().await.unwrap().unlock().await.unwrap();
            lr.lock().await.unwrap().unlock().await.unwrap();
        }
        let names = ["off_acq", "req_acq", "off_acq_rel", "req_acq_rel"];
        let mut d: BTreeMap<&str, Dist> = names.iter().map(|n| (*n, Dist::default())).collect();
        let iters = self.scale.lat_iters;
        for round in 0..self.scale.rounds {
            for k in 0..names.len() {
                let name = names[(k + round) % names.len()];
                let l = if name.starts_with("off") { &lo } else { &lr };
                let mut v = Vec::with_capacity(iters);
                for _ in 0..iters {
                    let t = Instant::now();
                    let g = l.lock().await.unwrap();
                    if name.ends_with("_acq") {
                        v.push(t.elapsed().as_secs_f64() * 1e6);
                        g.unlock().await.unwrap();
                    } else {
                        g.unlock().await.unwrap();
                        v.push(t.elapsed().as_secs_f64() * 1e6);
                    }
                }
                d.get_mut(name).unwrap().push_round(v);
            }
        }
        let acq = ratio(&d["req_acq"], &d["off_acq"]);
        let pair = ratio(&d["req_acq_rel"], &d["off_acq_rel"]);
        let mut md = String::new();
        let _ = writeln!(md, "## 6. Replica sync (`WAIT`, `ReplicaSync::Required`)\n");
        let _ = writeln!(md, "A private master with one replica on loopback; the same acquisitions with `ReplicaSync::Off` and `Required` (script + `WAIT 1 1000` in one pipeline), rounds interleaved.\n");
        let _ = writeln!(md, "| measurement | Off p50 | Required p50 | ratio (spread) |");
        let _ = writeln!(md, "|---|---|---|---|");
        let _ = writeln!(
            md,
            "| acquire | {} | {} | {} |",
            us(d["off_acq"].p50()),
            us(d["req_acq"].p50()),
            fmt_ratio(acq)
        );
        let _ = writeln!(
            md,
            "| acquire + release | {} | {} | {} |\n",
            us(d["off_acq_rel"].p50()),
            us(d["req_acq_rel"].p50()),
            fmt_ratio(pair)
        );
        let mut j = serde_json::Map::new();
        for (k, v) in &d {
            j.insert((*k).into(), v.json());
        }
        j.insert("acquire_ratio".into(), json!(acq.0));
        j.insert("acquire_release_ratio".into(), json!(pair.0));
        self.json.insert("replica_sync".into(), Value::Object(j));
        self.md.push_str(&md);
        off.shutdown().await.unwrap();
        req.shutdown().await.unwrap();
    }
}
