//! Redisson's `RCountDownLatch`: a count in Redis that services count down, and waiters woken
//! when it reaches zero, in Rust and Java alike.
//!
//! The layout is Redisson's (`docs/protocol.md`, "Count-down latch"): the count is a decimal
//! string at the latch's name, deleted when it reaches zero; its channel is
//! `redisson_countdownlatch__channel__{<name>}`, which carries `1` when a count is set or the
//! latch is deleted, and `0` when a count-down made it exactly zero. Waiters here read the count
//! again on every message (and, as a fallback, every `subscribed_poll_interval`), so a latch that
//! is deleted, expires or reaches zero without a message (a client that does not publish) wakes
//! them too.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::error::{Error, Result};
use crate::inner::ClientInner;
use crate::kinds::common;
use crate::layout::{ChannelSpec, KeySpec, Layout};
use crate::script::{self, lua};
use crate::synchronizer::wait::WaitTarget;
use crate::waiting::Step;

lua!(LATCH_TRY_SET_COUNT, "latch/try_set_count", with "common/notify");
lua!(LATCH_COUNT_DOWN, "latch/count_down", with "common/notify", "common/counter");
lua!(LATCH_DELETE, "latch/delete", with "common/notify");

fn channel_of(key: &str, _: &str) -> String {
    channel(key)
}

/// What a count-down latch keeps in Redis and sends there (for inspection and ACL audits).
pub(crate) static LAYOUT: Layout = Layout::new(
    "latch",
    "getCountDownLatch",
    &[
        KeySpec::new(
            "count",
            common::lock_key,
            Some("string"),
            false,
            &["decr", "del", "exists", "get", "set"],
        )
        .with_client_commands(&["get"]),
        KeySpec::new("count channel", channel_of, None, false, &[]),
    ],
    &[ChannelSpec::new("count channel", channel_of, true)],
    &[&LATCH_TRY_SET_COUNT, &LATCH_COUNT_DOWN, &LATCH_DELETE],
);

/// The message that a count was set or the latch deleted.
const NEW_COUNT: &str = "1";
/// The message that the count reached zero.
const ZERO: &str = "0";

/// The channel of latch `key`: braces are always added (even when the name has some).
pub(crate) fn channel(key: &str) -> String {
    format!("redisson_countdownlatch__channel__{{{key}}}")
}

/// A handle to a count-down latch (Redisson's `getCountDownLatch(name)`); cheap to clone.
///
/// Nothing is sent until a method is called. Every method may be called from any task.
///
/// # Examples
///
/// ```no_run
/// # async fn demo(client: redisson_lock::Client) -> redisson_lock::Result<()> {
/// use std::time::Duration;
///
/// let latch = client.count_down_latch("latch:batch:7")?;
/// latch.try_set_count(3).await?;
/// // ... three workers (Rust or Java) each call count_down() when done ...
/// # for _ in 0..3 { latch.count_down().await?; }
/// if latch.wait_for(Duration::from_secs(60)).await? {
///     println!("batch done");
/// }
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct CountDownLatch {
    client: Arc<ClientInner>,
    key: Arc<str>,
    channel: Arc<str>,
}

impl std::fmt::Debug for CountDownLatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CountDownLatch").field("key", &self.key).finish()
    }
}

impl CountDownLatch {
    /// `key`: the latch's name after the name mapper.
    pub(crate) fn new(client: Arc<ClientInner>, key: String) -> Result<CountDownLatch> {
        let channel = channel(&key);
        if client.slots.per_slot() {
            use redis::cluster_routing::Slot;
            if Slot::for_key(key.as_bytes()) != Slot::for_key(channel.as_bytes()) {
                return Err(Error::InvalidArgument(format!(
                    "latch `{key}`: in a cluster its channel `{channel}` hashes to another slot than \
                     the latch (a name with braces); Redisson's scripts fail on it the same way"
                )));
            }
        }
        Ok(CountDownLatch {
            client,
            key: key.into(),
            channel: channel.into(),
        })
    }

    /// The Redis key of the count.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// Sets the count to `count` if the latch does not exist (Redisson's `trySetCount`); waiters
    /// are told of the new count. Returns whether it was set.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for a count above [`MAX_PERMITS`](crate::MAX_PERMITS) (2^53 −
    /// 1, the largest count the scripts hold exactly; nothing is sent); a Redis error.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future after the request was sent leaves it to Redis: the count may be set.
    /// Calling it again is safe (it never overwrites a latch).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn demo(client: redisson_lock::Client) -> redisson_lock::Result<()> {
    /// let latch = client.count_down_latch("latch:start")?;
    /// assert!(latch.try_set_count(2).await? || latch.count().await? > 0);
    /// # Ok(()) }
    /// ```
    pub async fn try_set_count(&self, count: u64) -> Result<bool> {
        if count > crate::MAX_PERMITS {
            return Err(Error::InvalidArgument(format!(
                "latch `{}`: count {count} (at most {})",
                self.key,
                crate::MAX_PERMITS
            )));
        }
        let count = count as i64;
        let mut inv = LATCH_TRY_SET_COUNT.prepare_invoke();
        inv.key(&*self.key)
            .key(&*self.channel)
            .arg(NEW_COUNT)
            .arg(count)
            .arg(self.client.publish_cmd);
        let set: i64 = self.run(&inv).await?;
        tracing::debug!(key = %self.key, count, set = set == 1, "latch: try_set_count");
        Ok(set == 1)
    }

    /// Counts down by one (Redisson's `countDown`): the latch goes away at zero, and its waiters
    /// are woken. Counting down a latch that does not exist (or no longer does) changes nothing.
    /// Returns the count left.
    ///
    /// # Errors
    ///
    /// [`Error::WrongType`] when the name holds another Redis type; a Redis error when it holds
    /// a string that is not a count; [`Error::OutOfRange`] when it holds a count beyond
    /// ±[`MAX_PERMITS`](crate::MAX_PERMITS) (set there by hand or by another client); nothing is
    /// written in any of these cases;
    /// [`Error::CommandTimeout`] and connection errors are **not** retried: the count-down may
    /// or may not have happened (as in Redisson, which never sends it twice), and sending it
    /// again could count twice.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future after the request was sent leaves it to Redis: it may count.
    pub async fn count_down(&self) -> Result<u64> {
        let mut inv = LATCH_COUNT_DOWN.prepare_invoke();
        inv.key(&*self.key)
            .key(&*self.channel)
            .arg(ZERO)
            .arg(self.client.publish_cmd);
        let left: i64 = self.run(&inv).await?;
        tracing::debug!(key = %self.key, left, "latch: count_down");
        Ok(u64::try_from(left).unwrap_or(0))
    }

    /// The count (Redisson's `getCount`): 0 when the latch does not exist.
    ///
    /// # Errors
    ///
    /// [`Error::WrongType`] when the name holds another type; [`Error::Protocol`] when it holds
    /// a string that is not a count; a Redis error.
    ///
    /// # Cancel safety
    ///
    /// A read: dropping the future changes nothing.
    pub async fn count(&self) -> Result<u64> {
        let mut get = redis::cmd("GET");
        get.arg(&*self.key);
        let cfg = &self.client.config;
        let v: Option<String> = script::read(&self.client.conn, cfg.command_timeout, &self.key, &get).await?;
        match v {
            None => Ok(0),
            Some(text) => match text.parse::<i64>() {
                Ok(n) => Ok(u64::try_from(n).unwrap_or(0)),
                Err(_) => Err(Error::Protocol(format!(
                    "latch `{}` holds `{text}`, not a count",
                    self.key
                ))),
            },
        }
    }

    /// Removes the latch (Redisson's `delete`); waiters are woken (here they find the count at
    /// zero and return; Redisson's waiters are not woken by a deletion). Returns whether there
    /// was one.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future after the request was sent leaves it to Redis: the latch may be gone.
    pub async fn delete(&self) -> Result<bool> {
        let mut inv = LATCH_DELETE.prepare_invoke();
        inv.key(&*self.key)
            .key(&*self.channel)
            .arg(NEW_COUNT)
            .arg(self.client.publish_cmd);
        let gone: i64 = self.run(&inv).await?;
        tracing::debug!(key = %self.key, deleted = gone == 1, "latch: delete");
        Ok(gone == 1)
    }

    /// Waits until the count is zero (Redisson's `await()`); returns at once when it is (also
    /// when the latch does not exist).
    ///
    /// # Errors
    ///
    /// [`Error::Shutdown`] when the client shuts down meanwhile; a Redis error from reading the
    /// count (a failed read is tried again after `retry_interval`, up to `retry_attempts` times
    /// in a row).
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: it only reads; dropping it leaves the channel (unsubscribed once no local
    /// waiter uses it).
    pub async fn wait(&self) -> Result<()> {
        self.wait_until(None).await.map(|_| ())
    }

    /// Waits at most `timeout` until the count is zero (Redisson's `await(timeout)`). Returns
    /// whether it reached zero.
    ///
    /// # Errors
    ///
    /// As [`wait`](Self::wait).
    ///
    /// # Cancel safety
    ///
    /// Cancel safe, as [`wait`](Self::wait).
    pub async fn wait_for(&self, timeout: Duration) -> Result<bool> {
        self.wait_until(Some(crate::deadline::after(Instant::now(), timeout)))
            .await
    }

    async fn wait_until(&self, deadline: Option<Instant>) -> Result<bool> {
        let target = WaitTarget {
            client: &self.client,
            key: &self.key,
            channel: &self.channel,
            kind: "latch",
            messages: crate::pubsub::Messages::WakeAll,
        };
        let reached = target
            .until(deadline, || async {
                Ok(match self.count().await? {
                    0 => Step::Done(()),
                    _ => Step::again(),
                })
            })
            .await?;
        Ok(reached.is_some())
    }

    async fn run(&self, inv: &redis::ScriptInvocation<'_>) -> Result<i64> {
        script::run(
            &self.client.conn,
            self.client.config.command_timeout,
            &self.key,
            inv,
        )
        .await
    }
}
