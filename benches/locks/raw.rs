//! The physical floor: our own Lua scripts sent as raw EVALSHA through redis-rs, with nothing
//! of the client around them (acquire / release, and the watchdog's renewal round).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use redis::aio::ConnectionManager;
use redis::Script;

use crate::stats::p50;
use crate::sysinfo::proc_cpu;

/// `lua/lock/acquire.lua` with its prelude (`recorded`, `record`), as `src/script.rs` assembles it.
pub(crate) const ACQUIRE_LUA: &str = concat!(
    include_str!("../../lua/common/attempt.lua"),
    "\n",
    include_str!("../../lua/lock/acquire.lua")
);
/// `lua/lock/unlock.lua` with its prelude (`notify`), as `src/script.rs` assembles it.
pub(crate) const UNLOCK_LUA: &str = concat!(
    include_str!("../../lua/common/notify.lua"),
    "\n",
    include_str!("../../lua/lock/unlock.lua")
);
/// `lua/lock/renew_batch.lua` with its prelude (`extend_ttl`), as `src/script.rs` assembles it.
pub(crate) const RENEW_LUA: &str = concat!(
    include_str!("../../lua/common/extend_ttl.lua"),
    "\n",
    include_str!("../../lua/lock/renew_batch.lua")
);
/// Same length as our fields (`<uuid>:<task id>`).
pub(crate) const RAW_FIELD: &str = "00000000-0000-4000-8000-000000000000:1";
pub(crate) const LEASE_MS: u64 = 30_000;
pub(crate) const LATCH_MS: u64 = 12_400;

/// Raw EVALSHA of our own scripts through redis-rs on the same kind of connection (a
/// `ConnectionManager`): the physical floor for one acquire and one release.
#[derive(Clone)]
pub(crate) struct Raw {
    con: ConnectionManager,
    acquire: Arc<Script>,
    unlock: Arc<Script>,
    seq: Arc<AtomicU64>,
}

impl Raw {
    pub(crate) async fn new(url: &str) -> Raw {
        // the same settings as our client's command connection (src/client.rs, manager_config)
        let cfg = redis::aio::ConnectionManagerConfig::new()
            .set_response_timeout(Some(Duration::from_secs(3)))
            .set_connection_timeout(Some(Duration::from_secs(10)))
            .set_max_delay(Duration::from_secs(2));
        let con = redis::Client::open(url)
            .unwrap()
            .get_connection_manager_with_config(cfg)
            .await
            .unwrap();
        Raw {
            con,
            acquire: Arc::new(Script::new(ACQUIRE_LUA)),
            unlock: Arc::new(Script::new(UNLOCK_LUA)),
            seq: Arc::new(AtomicU64::new(0)),
        }
    }

    /// The acquire script with a fresh attempt latch, recording the grant in the owner's field
    /// (latch TTL 0, as ours sends for an owner new to the attempt): `None` when granted, else
    /// the PTTL (the Redisson-shaped answer the callers expect).
    pub(crate) async fn acquire(&self, key: &str) -> Option<i64> {
        let n = self.seq.fetch_add(1, Ordering::Relaxed);
        let mut c = self.con.clone();
        let reply: Vec<i64> = self
            .acquire
            .key(key)
            .key(format!("redisson_unlock_latch:{{{key}}}:a{n:031x}"))
            .arg(LEASE_MS)
            .arg(RAW_FIELD)
            .arg(0)
            .invoke_async(&mut c)
            .await
            .unwrap();
        (reply[0] != 1).then_some(reply[1])
    }

    /// The release script with a fresh latch (as ours sends); the latch expires on its own,
    /// unless `bg_del`: then it is deleted by a spawned task, as our unlock does.
    pub(crate) async fn release(&self, key: &str, bg_del: bool) {
        let n = self.seq.fetch_add(1, Ordering::Relaxed);
        let mut c = self.con.clone();
        let latch = format!("redisson_unlock_latch:{{{key}}}:{n:032x}");
        let r: Option<i64> = self
            .unlock
            .key(key)
            .key(format!("redisson_lock__channel:{{{key}}}"))
            .key(&latch)
            .arg(0)
            .arg(LEASE_MS)
            .arg(RAW_FIELD)
            .arg("PUBLISH")
            .arg(LATCH_MS)
            .arg(0)
            .invoke_async(&mut c)
            .await
            .unwrap();
        debug_assert_eq!(r, Some(1));
        if bg_del {
            let mut c = self.con.clone();
            tokio::spawn(async move {
                let _: redis::RedisResult<()> = redis::cmd("DEL").arg(&latch).query_async(&mut c).await;
            });
        }
    }

    pub(crate) async fn del(&self, key: &str) {
        let mut c = self.con.clone();
        let _: () = redis::cmd("DEL").arg(key).query_async(&mut c).await.unwrap();
    }

    pub(crate) async fn ping(&self) {
        let mut c = self.con.clone();
        let _: () = redis::cmd("PING").query_async(&mut c).await.unwrap();
    }
}

/// `rounds` raw renewal rounds (renew_batch.lua, 100 keys per call, all calls concurrent);
/// returns the client CPU seconds of one round (median).
pub(crate) async fn raw_renew_round(raw: &Raw, n: usize, field: &str, rounds: usize, tck: f64) -> f64 {
    let script = Arc::new(Script::new(RENEW_LUA));
    let keys: Vec<String> = (0..n).map(|i| format!("bench:wd:{i}")).collect();
    let mut cpus = Vec::new();
    for _ in 0..rounds {
        let c0 = proc_cpu(tck);
        let calls = keys.chunks(100).map(|chunk| {
            let mut inv = script.prepare_invoke();
            inv.arg(30_000);
            for k in chunk {
                inv.key(k).arg(field);
            }
            let mut con = raw.con.clone();
            async move {
                if let Err(e) = inv.invoke_async::<Vec<i64>>(&mut con).await {
                    eprintln!("bench: raw renewal call failed: {e}");
                }
            }
        });
        futures::future::join_all(calls).await;
        cpus.push(proc_cpu(tck) - c0);
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    p50(&cpus)
}
