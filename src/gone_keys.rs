//! The batched check behind cheap waiting: which locks that subscribed waiters wait on are gone.
//!
//! A waiter that listens on its lock's channel sleeps until the holder's TTL runs out (at most
//! [`Config::with_subscribed_poll_interval`]), as Redisson's do, so waiting costs almost nothing.
//! What that alone would miss is an unlock whose message never arrives: a raw `DEL`, a holder
//! that does not publish, a message lost on its way. So while it sleeps, a waiter registers its
//! lock's key here; once per [`Config::with_poll_interval`] one task per client asks Redis, in
//! batches of up to [`BATCH`] keys (one hash slot per call where the server enforces slots), which of them no longer exist
//! (`lua/common/missing.lua`), and wakes the waiters of those (not on a channel that had an
//! unlock message just before: that lock is being handed over). 10,000 waiters on held locks
//! cost 10 calls per second, not 10,000; a lock deleted without a message is noticed within one
//! poll interval. Nothing is sent while nobody waits.

use foldhash::HashMap;
use std::sync::{Arc, Weak};
use std::time::Duration;

use parking_lot::Mutex;

use crate::config::Config;
use crate::conn::Connection;
use crate::holds::Holds;
use crate::pubsub::Channel;
use crate::script;

/// An unlock message this long before a check means the lock is being handed over by message
/// (the woken waiter's acquire may not have reached Redis yet when the check runs).
const HANDOVER_MS: u64 = 50;

/// Keys per call (an `EXISTS` each inside one script: about 0.1 µs of server time per key).
pub(crate) const BATCH: usize = 1_000;

/// The channels to wake when one key is gone, each with its count of registered waiters.
type Wakers = Vec<(Arc<Channel>, usize)>;

/// The keys subscribed waiters wait on, each with the channels to wake when it is gone.
#[derive(Default)]
pub(crate) struct GoneKeys {
    keys: Mutex<HashMap<String, Wakers>>,
}

/// One waiter's registration; dropping it ends it.
pub(crate) struct GoneKeyWatch {
    owner: Arc<GoneKeys>,
    key: String,
    ch: Arc<Channel>,
}

impl GoneKeyWatch {
    /// Whether this registration wakes `ch`.
    pub(crate) fn wakes(&self, ch: &Arc<Channel>) -> bool {
        Arc::ptr_eq(&self.ch, ch)
    }
}

impl Drop for GoneKeyWatch {
    fn drop(&mut self) {
        let mut keys = self.owner.keys.lock();
        if let Some(list) = keys.get_mut(&self.key) {
            if let Some(i) = list.iter().position(|(c, _)| Arc::ptr_eq(c, &self.ch)) {
                list[i].1 -= 1;
                if list[i].1 == 0 {
                    list.swap_remove(i);
                }
            }
            if list.is_empty() {
                keys.remove(&self.key);
            }
        }
    }
}

impl GoneKeys {
    /// Registers a waiter on `key` that listens on `ch`.
    pub(crate) fn watch(self: &Arc<Self>, key: &str, ch: Arc<Channel>) -> GoneKeyWatch {
        let mut keys = self.keys.lock();
        let list = keys.entry(key.to_owned()).or_default();
        match list.iter_mut().find(|(c, _)| Arc::ptr_eq(c, &ch)) {
            Some((_, n)) => *n += 1,
            None => list.push((ch.clone(), 1)),
        }
        GoneKeyWatch {
            owner: self.clone(),
            key: key.to_owned(),
            ch,
        }
    }

    /// Number of keys watched now (for tests and diagnostics).
    pub(crate) fn len(&self) -> usize {
        self.keys.lock().len()
    }

    fn snapshot(&self) -> Vec<String> {
        self.keys.lock().keys().cloned().collect()
    }

    /// Wakes every waiter of `key` (it is gone: they re-try at once), except on channels that
    /// had an unlock message since `since` (a [`clock_ms`](crate::pubsub::clock_ms) reading):
    /// there the lock is being handed over by message, and waking everyone would only add
    /// attempts that lose.
    fn wake(&self, key: &str, since: u64) {
        let channels: Vec<Arc<Channel>> = self
            .keys
            .lock()
            .get(key)
            .map(|l| l.iter().map(|(c, _)| c.clone()).collect())
            .unwrap_or_default();
        for ch in channels {
            if ch.message_since(since) {
                continue;
            }
            ch.notify.notify_waiters();
            ch.notify.notify_one();
        }
    }
}

/// Starts the checking task on the current runtime; it ends with the client (its hold table
/// dropped or closed).
pub(crate) fn start(
    gone_keys: &Arc<GoneKeys>,
    holds: &Arc<Holds>,
    conn: Connection,
    slots: Arc<crate::slots::Slots>,
    config: &Config,
) {
    let task = GoneKeyChecker {
        closed: holds.closed(),
        gone_keys: Arc::downgrade(gone_keys),
        holds: holds.downgrade(),
        conn,
        slots,
        every: config.poll_interval,
        command_timeout: config.command_timeout,
    };
    tokio::spawn(task.run());
}

struct GoneKeyChecker {
    /// Ends the task at shutdown (not at its next check).
    closed: crate::holds::Closed,
    gone_keys: Weak<GoneKeys>,
    holds: Weak<Holds>,
    conn: Connection,
    /// Whether a call may carry keys of several slots.
    slots: Arc<crate::slots::Slots>,
    every: Duration,
    command_timeout: Duration,
}

impl GoneKeyChecker {
    async fn run(mut self) {
        loop {
            // 90-100 % of the interval: clients started together do not check in lockstep
            let pause = self.every.mul_f64(0.9 + 0.1 * fastrand::f64());
            tokio::select! {
                _ = tokio::time::sleep(pause) => {}
                _ = self.closed.wait() => return,
            }
            let (Some(gone_keys), Some(holds)) = (self.gone_keys.upgrade(), self.holds.upgrade()) else {
                return;
            };
            if holds.is_closed() {
                return;
            }
            drop(holds);
            let keys = gone_keys.snapshot();
            if keys.is_empty() {
                continue;
            }
            let together = !self.slots.per_slot();
            let mut refused = Vec::new();
            for group in self.slots.groups(keys, |k| k) {
                for chunk in group.chunks(BATCH) {
                    if !self.check(&gone_keys, chunk).await {
                        refused.extend_from_slice(chunk);
                    }
                }
            }
            // refused for keys of several slots: the rule switched, so send them again grouped
            if together && self.slots.per_slot() {
                for group in self.slots.groups(refused, |k| k) {
                    for chunk in group.chunks(BATCH) {
                        self.check(&gone_keys, chunk).await;
                    }
                }
            }
        }
    }

    /// Checks `keys` and wakes the waiters of those gone; false when the call was refused for
    /// carrying keys of several slots.
    async fn check(&self, gone_keys: &GoneKeys, keys: &[String]) -> bool {
        // a message shortly before (or after) the check means a hand-over, not a lost message
        let since = crate::pubsub::clock_ms().saturating_sub(HANDOVER_MS);
        let mut inv = script::MISSING.prepare_invoke();
        for k in keys {
            inv.key(k);
        }
        match script::run_read::<Vec<usize>>(&self.conn, self.command_timeout, &keys[0], &inv).await {
            Ok(gone) => {
                for i in gone {
                    if let Some(key) = i.checked_sub(1).and_then(|i| keys.get(i)) {
                        tracing::debug!(key = %key, "lock gone without an unlock message: waking its waiters");
                        gone_keys.wake(key, since);
                    }
                }
            }
            Err(e) if self.slots.refused_together(&e) => return false,
            // the waiters still re-try when the holder's TTL runs out; next round tries again
            Err(e) => tracing::debug!(error = %e, keys = keys.len(), "checking waited-on locks failed"),
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registrations_are_counted_per_key_and_channel() {
        let v = Arc::new(GoneKeys::default());
        let (a, b) = (
            Arc::new(Channel::new(crate::pubsub::Messages::Unlock)),
            Arc::new(Channel::new(crate::pubsub::Messages::Unlock)),
        );
        let w1 = v.watch("k", a.clone());
        let w2 = v.watch("k", a.clone());
        let w3 = v.watch("k", b.clone());
        let w4 = v.watch("j", b.clone());
        assert_eq!(v.len(), 2);
        assert!(w1.wakes(&a) && !w1.wakes(&b));
        drop(w1);
        drop(w3);
        assert_eq!(v.keys.lock()["k"].len(), 1, "b left k, a still has one waiter");
        drop(w2);
        assert_eq!(v.len(), 1, "k has no waiters left");
        drop(w4);
        assert_eq!(v.len(), 0);
    }

    #[tokio::test]
    async fn a_gone_key_wakes_its_waiters() {
        let v = Arc::new(GoneKeys::default());
        let ch = Arc::new(Channel::new(crate::pubsub::Messages::Unlock));
        let _w = v.watch("k", ch.clone());
        let ch2 = ch.clone();
        let waiter = tokio::spawn(async move { ch2.notify.notified().await });
        tokio::task::yield_now().await;
        v.wake("k", crate::pubsub::clock_ms());
        tokio::time::timeout(Duration::from_secs(1), waiter)
            .await
            .unwrap()
            .unwrap();
    }

    #[tokio::test]
    async fn a_channel_with_a_fresh_message_is_being_handed_over_and_not_woken() {
        let v = Arc::new(GoneKeys::default());
        let ch = Arc::new(Channel::new(crate::pubsub::Messages::Unlock));
        let _w = v.watch("k", ch.clone());
        let since = crate::pubsub::clock_ms().saturating_sub(HANDOVER_MS);
        ch.note_message();
        let ch2 = ch.clone();
        let waiter = tokio::spawn(async move { ch2.notify.notified().await });
        tokio::task::yield_now().await;
        v.wake("k", since);
        assert!(
            tokio::time::timeout(Duration::from_millis(200), waiter)
                .await
                .is_err(),
            "a message had just arrived: the waiters were woken by it, not again"
        );
    }
}
