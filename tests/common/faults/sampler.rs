//! The [`Sampler`], which watches lock keys for missing TTLs and extra owners while faults run.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use redis::aio::MultiplexedConnection;

use super::super::history::{now_ns, Sample};
use super::target::admin_conn;

/// What a [`Sampler`] saw.
#[derive(Clone, Debug, Default)]
pub struct SamplerReport {
    /// Rounds that got an answer.
    pub rounds: u64,
    /// Rounds that failed (fault in progress).
    pub failed_rounds: u64,
    /// Lock keys without a TTL, or with more than one owner field.
    pub violations: Vec<Sample>,
}

/// Checks `PTTL` (and the number of owner fields) of every lock name every `period`, recording
/// any key without a TTL (`-1`) and any lock hash with more than one field.
pub struct Sampler {
    task: tokio::task::JoinHandle<SamplerReport>,
    stop: Arc<AtomicBool>,
}

impl Sampler {
    pub fn spawn(url: String, names: Vec<String>, period: Duration) -> Sampler {
        // no-writes: runs during CLIENT PAUSE WRITE and OOM too
        const PROBE: &str = "#!lua flags=no-writes
local out = {}
for _, k in ipairs(KEYS) do
  local t = redis.call('TYPE', k)['ok']
  local n = -1
  if t == 'hash' then n = redis.call('HLEN', k) end
  out[#out + 1] = redis.call('PTTL', k)
  out[#out + 1] = n
end
return out";
        let stop = Arc::new(AtomicBool::new(false));
        let stop2 = stop.clone();
        let task = tokio::spawn(async move {
            let mut rep = SamplerReport::default();
            let mut conn: Option<MultiplexedConnection> = None;
            while !stop2.load(Ordering::Relaxed) {
                tokio::time::sleep(period).await;
                if conn.is_none() {
                    conn = admin_conn(&url, Some(Duration::from_millis(500))).await.ok();
                }
                let Some(c) = conn.as_mut() else {
                    rep.failed_rounds += 1;
                    continue;
                };
                let mut cmd = redis::cmd("EVAL");
                cmd.arg(PROBE).arg(names.len());
                for n in &names {
                    cmd.arg(n);
                }
                let time = now_ns();
                match cmd.query_async::<Vec<i64>>(c).await {
                    Ok(v) => {
                        rep.rounds += 1;
                        for (i, name) in names.iter().enumerate() {
                            let (pttl, hlen) = (v[2 * i], v[2 * i + 1]);
                            let problem = if pttl == -1 {
                                "key without TTL"
                            } else if hlen > 1 {
                                "more than one owner field"
                            } else {
                                continue;
                            };
                            rep.violations.push(Sample {
                                time,
                                lock: name.clone(),
                                pttl,
                                hlen,
                                problem: problem.into(),
                            });
                        }
                    }
                    Err(_) => {
                        rep.failed_rounds += 1;
                        conn = None;
                    }
                }
            }
            rep
        });
        Sampler { task, stop }
    }

    pub async fn stop(self) -> SamplerReport {
        self.stop.store(true, Ordering::Relaxed);
        self.task.await.expect("the sampler task panicked")
    }
}
