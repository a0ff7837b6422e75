//! Shared helpers of every scenario: raw Redis access for assertions, polling, small formatting.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::StreamExt;
use redisson_lock_compat_tests::{now_ms, Result};

/// Java calls that should answer at once.
pub const CMD: Duration = Duration::from_secs(10);
/// The wake-up bound of the issue: from the holder's unlock reply to the waiter's acquisition.
pub const WAKE_BOUND_MS: f64 = 200.0;
/// Watchdog timeout of the "fast" sides (scenarios 5, 6, 7, 14).
pub const FAST_WATCHDOG_MS: u64 = 1000;
/// `poll_interval` of the quiet Rust client (the fair scenarios): far above [`WAKE_BOUND_MS`], so a
/// Rust waiter that gets in within the bound was woken by a message, not by its own re-poll.
pub const QUIET_POLL: Duration = Duration::from_secs(10);

/// Raw Redis access for assertions (one multiplexed connection, or a cluster connection that
/// routes by key; cloned per call).
#[derive(Clone)]
pub struct Raw(pub redisson_lock::Connection);

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
    /// A sorted set, lowest score first: (member, score).
    pub async fn zrange_scores(&self, key: &str) -> Result<Vec<(String, f64)>> {
        self.q(redis::cmd("ZRANGE").arg(key).arg(0).arg(-1).arg("WITHSCORES"))
            .await
    }
    /// How many of `keys` exist.
    pub async fn exists(&self, keys: &[&str]) -> Result<i64> {
        self.q(redis::cmd("EXISTS").arg(keys)).await
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

/// The lock's channel (`redisson_lock__channel:{N}`, or `redisson_lock__channel:N` when `N` has a
/// `{`, as a map entry's lock name does), shared by the plain, fenced and non-reentrant locks (the
/// spin lock publishes nothing).
pub fn channel_of(name: &str) -> String {
    if name.contains('{') {
        format!("redisson_lock__channel:{name}")
    } else {
        format!("redisson_lock__channel:{{{name}}}")
    }
}

/// The fenced lock's token counter (`redisson_lock_token:{N}`: a decimal string without TTL,
/// never deleted by Redisson).
pub fn token_key(name: &str) -> String {
    format!("redisson_lock_token:{{{name}}}")
}

/// The fair lock's queue of waiting owner fields (`redisson_lock_queue:{N}`, a list, head first).
pub fn fair_queue(name: &str) -> String {
    format!("redisson_lock_queue:{{{name}}}")
}

/// The fair lock's waiter deadlines (`redisson_lock_timeout:{N}`, a zset: field -> epoch ms).
pub fn fair_deadlines(name: &str) -> String {
    format!("redisson_lock_timeout:{{{name}}}")
}

/// A fair waiter's own channel (`redisson_lock__channel:{N}:<field>`): only the head of the queue
/// is woken, there.
pub fn fair_channel(name: &str, field: &str) -> String {
    format!("{}:{field}", channel_of(name))
}

/// One message a [`Watch`] saw: (epoch ms when it arrived, channel, payload).
pub type Seen = (f64, String, String);

/// A raw subscriber: `PSUBSCRIBE *{N}*` on its own connection records every message published
/// on any channel of lock N (`redisson_lock__channel:{N}`, `redisson_rwlock:{N}`, ...). A pattern
/// subscription does not count in `PUBSUB NUMSUB`/`PUBSUB CHANNELS`, so it never looks like a
/// waiter. Dropping it closes the connection.
pub struct Watch {
    seen: Arc<Mutex<Vec<Seen>>>,
    task: tokio::task::JoinHandle<()>,
    pub pattern: String,
}

impl Watch {
    pub async fn lock_channels(url: &str, raw: &Raw, name: &str) -> Result<Watch> {
        let pattern = format!("*{{{name}}}*");
        // Proves the subscription is live: published until it arrives, never recorded.
        let probe = format!("compat-probe:{{{name}}}");
        let mut ps = redis::Client::open(url)
            .map_err(|e| e.to_string())?
            .get_async_pubsub()
            .await
            .map_err(|e| format!("pubsub connect: {e}"))?;
        ps.psubscribe(&pattern)
            .await
            .map_err(|e| format!("PSUBSCRIBE {pattern}: {e}"))?;
        let seen = Arc::new(Mutex::new(Vec::new()));
        let live = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (sink, live2, probe2) = (seen.clone(), live.clone(), probe.clone());
        let task = tokio::spawn(async move {
            let mut stream = ps.on_message();
            while let Some(m) = stream.next().await {
                if m.get_channel_name() == probe2 {
                    live2.store(true, std::sync::atomic::Ordering::SeqCst);
                    continue;
                }
                let payload = String::from_utf8_lossy(m.get_payload_bytes()).into_owned();
                if let Ok(mut v) = sink.lock() {
                    v.push((now_ms(), m.get_channel_name().to_owned(), payload));
                }
            }
        });
        let w = Watch { seen, task, pattern };
        until(Duration::from_secs(5), "the PSUBSCRIBE delivers", || async {
            if live.load(std::sync::atomic::Ordering::SeqCst) {
                return Ok(true);
            }
            raw.q::<i64>(redis::cmd("PUBLISH").arg(&probe).arg("probe"))
                .await?;
            Ok(false)
        })
        .await?;
        Ok(w)
    }

    /// Every message so far.
    pub fn seen(&self) -> Vec<Seen> {
        self.seen.lock().map(|v| v.clone()).unwrap_or_default()
    }

    /// Waits up to `limit` until at least `n` messages arrived; returns them all.
    pub async fn wait_for(&self, n: usize, limit: Duration) -> Result<Vec<Seen>> {
        let r = until(limit, &format!("{n} message(s) on {}", self.pattern), || async {
            Ok(self.seen().len() >= n)
        })
        .await;
        let seen = self.seen();
        r.map_err(|e| format!("{e}; seen {seen:?}"))?;
        Ok(seen)
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        self.task.abort();
    }
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
