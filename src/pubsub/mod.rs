//! One pub/sub hub per client: shared, reference-counted subscriptions to unlock channels.
//!
//! Each channel has one `Notify`. Redisson's unlock messages map onto it directly
//! ([`Messages::Unlock`]): `0` → `notify_one` (wake one local waiter, or store one permit for the
//! next), `1` → `notify_waiters` (wake every registered waiter). On a latch's channel
//! ([`Messages::WakeAll`]) every message wakes every registered waiter; on a semaphore's
//! ([`Messages::Permits`]) a message of `n` permits wakes at most `n` local waiters, as
//! Redisson's do. A waiter registers (`enable`) before
//! it re-tries the lock, so a message published between its attempt and its sleep is never lost.
//! A dropped connection wakes every waiter and makes its subscription stale: each re-tries at
//! once, joins again (the SUBSCRIBE completes when the connection is back) and re-tries after
//! that, so an unlock published while the connection was down is never waited out.
//!
//! # One driver per channel
//!
//! Callers never send SUBSCRIBE or UNSUBSCRIBE themselves. A channel's local users only change
//! its *wanted* state (a user count, and a request for a subscription); one spawned driver task
//! per channel sends the commands, one at a time, until the server matches what is wanted:
//!
//! ```text
//!             join (requested)                SUBSCRIBE ok
//!   [absent] ------------------> [subscribing] -----------> [subscribed]
//!      ^                            |  SUBSCRIBE failed          |
//!      |                            v  or timed out              | last user leaves
//!      |                      [maybe subscribed] <---------------+
//!      |    UNSUBSCRIBE ok        |   (no users)
//!      +--------------------------+   (a user joins meanwhile: SUBSCRIBE again)
//! ```
//!
//! When the last user leaves a confirmed subscription, the driver waits
//! [`LINGER`](driver::LINGER) (50 ms) before its UNSUBSCRIBE: a lock passed back and forth
//! between two tasks keeps its channel, and the task that re-queues joins it without a command.
//!
//! So a caller that times out, fails or is dropped never cancels a command half-way: the driver
//! finishes it, notices that nobody is left, and undoes it; the map entry goes away only once
//! the server is (as far as can be known) unsubscribed. `subscribe` only waits, bounded by the
//! caller's budget, for the driver's answer.
//!
//! # Sharded subscriptions that the server drops
//!
//! When a sharded channel's slot leaves a node (slot migration, failover), Redis drops its
//! subscribers with a `SUNSUBSCRIBE` push. The hub then counts the channel as dropped and wakes
//! its waiters; each sees its [`Subscription`] is stale and joins again, which sends a new
//! `SSUBSCRIBE` (routed to the slot's new node) before the old user leaves.
//!
//! # Health
//!
//! A failed or timed-out SUBSCRIBE (or UNSUBSCRIBE) marks pub/sub unhealthy. Until a backoff
//! (100 ms, doubling up to 5 s) has passed, `subscribe` calls that would need a new SUBSCRIBE
//! fail at once, so waiters poll instead of spending their budget; then one caller per backoff
//! period is let through to probe. Any successful command makes the hub healthy again. Joining a
//! channel that is already subscribed is never refused.

mod channel;
mod conn;
mod driver;
mod health;
mod invalidated;
#[cfg(all(test, redisson_lock_loom))]
mod loom_models;
mod push;
#[cfg(test)]
mod tests;

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::error::{Error, Result};
use crate::primitives::Mutex;

pub(crate) use channel::{clock_ms, Channel, ChannelsHandle, Messages};
pub(crate) use conn::{cluster_conn, PubSubCommands, PubSubConn};
use health::{Failure, Health};
pub(crate) use invalidated::{Invalidated, ToCheck};
pub(crate) use push::{push_handler, HubSink, Pushes};

pub(crate) struct Hub {
    channels: ChannelsHandle,
    conn: Option<PubSubConn>,
    commands: PubSubCommands,
    health: Mutex<Health>,
    /// The client's runtime, where channel drivers run (the one `new` was called in).
    runtime: Option<tokio::runtime::Handle>,
}

impl Hub {
    #[cfg(test)]
    pub(crate) fn new_channels() -> ChannelsHandle {
        Arc::new(Mutex::new(foldhash::HashMap::default()))
    }

    pub(crate) fn new(channels: ChannelsHandle, conn: Option<PubSubConn>, commands: PubSubCommands) -> Hub {
        Hub {
            channels,
            conn,
            commands,
            health: Mutex::new(Health::default()),
            runtime: tokio::runtime::Handle::try_current().ok(),
        }
    }

    pub(crate) fn has_connection(&self) -> bool {
        self.conn.is_some()
    }

    /// Whether the last pub/sub command succeeded (for tests and diagnostics).
    #[cfg_attr(not(test), allow(dead_code))]
    pub(crate) fn is_healthy(&self) -> bool {
        self.health.lock().is_healthy()
    }

    /// Joins `channel` only if the server already confirmed its subscription (other local
    /// waiters use it, or used it a moment ago): no command is sent. `None` otherwise (also without a pub/sub
    /// connection, or while the subscription is being made).
    pub(crate) fn join_subscribed(self: &Arc<Self>, channel: &str) -> Option<Subscription> {
        self.conn.as_ref()?;
        let map = self.channels.lock();
        let ch = map.get(channel)?;
        let mut st = ch.state.lock();
        // (no users left but still subscribed: the driver has not sent its UNSUBSCRIBE yet and
        // will see this user and keep the subscription)
        if !st.subscribed {
            return None;
        }
        st.users += 1;
        let dropped = st.dropped;
        drop(st);
        Some(Subscription::new(self, channel, ch.clone(), dropped))
    }

    /// Joins `channel`, subscribing if it is not subscribed yet. Returns within `budget`: with
    /// the subscription, or with the SUBSCRIBE's error, or [`Error::CommandTimeout`] when it
    /// did not complete in time, or at once with the last failure while pub/sub is unhealthy.
    ///
    /// Cancel safe: dropping the future (or an error) leaves the channel again; a SUBSCRIBE
    /// already sent is finished by the channel's driver and undone if nobody uses the channel.
    pub(crate) async fn subscribe(
        self: &Arc<Self>,
        channel: &str,
        messages: Messages,
        budget: Duration,
    ) -> Result<Subscription> {
        let (sub, seen_failures) = {
            let mut map = self.channels.lock();
            let existing = map.get(channel).cloned();
            if let Some(ch) = &existing {
                let mut st = ch.state.lock();
                if st.subscribed || self.conn.is_none() {
                    st.users += 1;
                    let dropped = st.dropped;
                    drop(st);
                    return Ok(Subscription::new(self, channel, ch.clone(), dropped));
                }
            }
            if self.conn.is_some() {
                self.health.lock().admit(Instant::now())?;
            }
            let ch = existing.unwrap_or_else(|| {
                let ch = Arc::new(Channel::new(messages));
                map.insert(channel.to_owned(), ch.clone());
                ch
            });
            let mut st = ch.state.lock();
            st.users += 1;
            let sub = Subscription::new(self, channel, ch.clone(), st.dropped);
            if self.conn.is_none() {
                return Ok(sub); // no pub/sub connection: the waiter polls
            }
            if !st.subscribing {
                st.requested = true; // an in-flight SUBSCRIBE serves this user too
            }
            let seen = st.failures;
            let start = !st.driving;
            st.driving = true;
            drop(st);
            if start {
                if !self.spawn_driver(channel, &ch) {
                    ch.state.lock().driving = false;
                    drop(map); // before `sub` leaves, which takes the map lock
                    drop(sub);
                    return Err(Error::Shutdown);
                }
            } else {
                ch.kick.notify_one();
            }
            (sub, seen)
        };

        let ch = sub.ch.clone();
        let outcome = async {
            loop {
                let settled = ch.settled.notified();
                let mut settled = std::pin::pin!(settled);
                settled.as_mut().enable();
                {
                    let st = ch.state.lock();
                    if st.subscribed {
                        return Ok(());
                    }
                    if st.failures > seen_failures {
                        return Err(st
                            .last_failure
                            .as_ref()
                            .map_or(Error::CommandTimeout(budget), Failure::to_error));
                    }
                }
                settled.await;
            }
        };
        match crate::primitives::timeout(budget, outcome).await {
            Ok(Ok(())) => Ok(sub),
            Ok(Err(e)) => Err(e),
            Err(_) => Err(Error::CommandTimeout(budget)),
        }
    }

    /// One user leaves `ch`; the last one starts the driver to unsubscribe, or removes the
    /// channel when nothing is (maybe) subscribed.
    fn leave(self: &Arc<Self>, name: &str, ch: &Arc<Channel>) {
        let unsubscribe = {
            let mut map = self.channels.lock();
            let mut st = ch.state.lock();
            st.users -= 1;
            if st.users > 0 || st.driving {
                return; // a running driver sees the change
            }
            if st.maybe_subscribed {
                st.driving = true;
                true
            } else {
                if map.get(name).is_some_and(|cur| Arc::ptr_eq(cur, ch)) {
                    map.remove(name);
                }
                false
            }
        };
        if unsubscribe && !self.spawn_driver(name, ch) {
            // nowhere to unsubscribe from: forget the channel (its connection goes with the runtime)
            let mut map = self.channels.lock();
            let mut st = ch.state.lock();
            st.driving = false;
            st.maybe_subscribed = false;
            st.subscribed = false;
            if std::mem::take(&mut st.counted) {
                crate::metrics::subscriptions(-1.0);
            }
            if st.users == 0 && map.get(name).is_some_and(|cur| Arc::ptr_eq(cur, ch)) {
                map.remove(name);
            }
        }
    }

    /// Number of channels with local users, or still being subscribed or unsubscribed (for
    /// tests and diagnostics).
    pub(crate) fn channel_count(&self) -> usize {
        self.channels.lock().len()
    }

    /// Number of local waiters over all channels.
    pub(crate) fn waiter_count(&self) -> usize {
        self.channels.lock().values().map(|c| c.state.lock().users).sum()
    }
}

/// One local user of a channel; leaving is automatic on drop.
pub(crate) struct Subscription {
    hub: Arc<Hub>,
    name: String,
    ch: Arc<Channel>,
    /// The channel's `dropped` count when this user joined.
    dropped: u64,
}

impl Subscription {
    /// `dropped`: the channel's count of server-side drops (read under its state lock).
    fn new(hub: &Arc<Hub>, name: &str, ch: Arc<Channel>, dropped: u64) -> Subscription {
        Subscription {
            hub: hub.clone(),
            name: name.to_owned(),
            ch,
            dropped,
        }
    }

    pub(crate) fn channel(&self) -> Arc<Channel> {
        self.ch.clone()
    }

    /// The server dropped the subscription since this user joined: join again (a new SUBSCRIBE
    /// goes to the node that serves the channel now).
    pub(crate) fn is_stale(&self) -> bool {
        self.ch.state.lock().dropped != self.dropped
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        self.hub.leave(&self.name, &self.ch);
    }
}
