//! Shared helpers of every scenario: raw Redis access for assertions, polling, small formatting.

use std::collections::BTreeMap;
use std::future::Future;
use std::time::{Duration, Instant};

use redis::aio::MultiplexedConnection;
use redisson_lock_compat_tests::Result;

/// Java calls that should answer at once.
pub const CMD: Duration = Duration::from_secs(10);
/// The wake-up bound of the issue: from the holder's unlock reply to the waiter's acquisition.
pub const WAKE_BOUND_MS: f64 = 200.0;
/// Watchdog timeout of the "fast" sides (scenarios 5, 6, 7, 14).
pub const FAST_WATCHDOG_MS: u64 = 1000;

/// Raw Redis access for assertions (one multiplexed connection, cloned per call).
#[derive(Clone)]
pub struct Raw(pub MultiplexedConnection);

impl Raw {
    pub async fn q<T: redis::FromRedisValue>(&self, cmd: &mut redis::Cmd) -> Result<T> {
        let mut c = self.0.clone();
        cmd.query_async(&mut c).await.map_err(|e| format!("redis: {e}"))
    }
    pub async fn hgetall(&self, key: &str) -> Result<BTreeMap<String, String>> {
        self.q(redis::cmd("HGETALL").arg(key)).await
    }
    pub async fn hget(&self, key: &str, field: &str) -> Result<Option<String>> {
        self.q(redis::cmd("HGET").arg(key).arg(field)).await
    }
    pub async fn pttl(&self, key: &str) -> Result<i64> {
        self.q(redis::cmd("PTTL").arg(key)).await
    }
    pub async fn numsub(&self, channel: &str) -> Result<i64> {
        let (_, n): (String, i64) = self.q(redis::cmd("PUBSUB").arg("NUMSUB").arg(channel)).await?;
        Ok(n)
    }
    pub async fn channels(&self) -> Result<Vec<String>> {
        self.q(redis::cmd("PUBSUB").arg("CHANNELS")).await
    }
    pub async fn get(&self, key: &str) -> Result<Option<String>> {
        self.q(redis::cmd("GET").arg(key)).await
    }
    pub async fn lrange(&self, key: &str) -> Result<Vec<String>> {
        self.q(redis::cmd("LRANGE").arg(key).arg(0).arg(-1)).await
    }
    pub async fn del(&self, keys: &[&str]) -> Result<i64> {
        self.q(redis::cmd("DEL").arg(keys)).await
    }
    pub async fn keys(&self) -> Result<Vec<String>> {
        self.keys_like("*").await
    }
    pub async fn keys_like(&self, pattern: &str) -> Result<Vec<String>> {
        self.q(redis::cmd("KEYS").arg(pattern)).await
    }
}

/// The lock's channel (`redisson_lock__channel:{N}`), shared by the plain, fenced and
/// non-reentrant locks (the spin lock publishes nothing).
pub fn channel_of(name: &str) -> String {
    format!("redisson_lock__channel:{{{name}}}")
}

/// A hash of exactly one field.
pub fn one_field(field: &str, count: &str) -> BTreeMap<String, String> {
    BTreeMap::from([(field.to_owned(), count.to_owned())])
}

/// Polls `cond` every 10 ms until it is true; an error after `limit`.
pub async fn until<F, Fut>(limit: Duration, what: &str, mut cond: F) -> Result<()>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<bool>>,
{
    let deadline = Instant::now() + limit;
    loop {
        if cond().await? {
            return Ok(());
        }
        ensure!(
            Instant::now() < deadline,
            "timed out after {limit:?} waiting until {what}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// `s` cut to `n` characters (with `…`).
pub fn short(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_owned()
    } else {
        format!("{}…", s.chars().take(n).collect::<String>())
    }
}
