//! A channel's driver: the one task that sends its SUBSCRIBE and UNSUBSCRIBE commands, one at
//! a time, until the server matches what the channel's users want.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::channel::{Change, Channel};
use super::health::Health;
use super::Hub;

/// Failed UNSUBSCRIBEs of an unused channel are retried (with backoff) this many times; then
/// the channel is forgotten.
const UNSUBSCRIBE_RETRIES: u32 = 5;
/// How long a confirmed subscription stays after its last local user left, before the driver
/// sends UNSUBSCRIBE: a holder that re-queues right after its waiter took over (a lock passed
/// back and forth) joins it without a command and without a second attempt.
pub(super) const LINGER: Duration = Duration::from_millis(50);

impl Hub {
    /// Starts `ch`'s driver (the caller has set `driving`) on the client's runtime. False
    /// without a runtime.
    pub(super) fn spawn_driver(self: &Arc<Self>, name: &str, ch: &Arc<Channel>) -> bool {
        let rt = self
            .runtime
            .clone()
            .or_else(|| tokio::runtime::Handle::try_current().ok());
        #[cfg(all(test, redisson_lock_loom))]
        if let Some(super::PubSubConn::Model(server)) = &self.conn {
            server.spawn_driver(self.clone().drive(name.to_owned(), ch.clone()));
            return true;
        }
        match rt {
            Some(rt) => {
                rt.spawn(self.clone().drive(name.to_owned(), ch.clone()));
                true
            }
            None => {
                tracing::debug!(channel = name, "no runtime to run the pub/sub driver on");
                false
            }
        }
    }

    /// Sends SUBSCRIBE/UNSUBSCRIBE for one channel until the server matches what its users
    /// want, then removes the channel from the map if it has no users left.
    async fn drive(self: Arc<Self>, name: String, ch: Arc<Channel>) {
        let mut unsubscribe_failures = 0u32;
        // after a failed UNSUBSCRIBE: no retry before this (a SUBSCRIBE may go out at once)
        let mut retry_at: Option<Instant> = None;
        let mut lingered = false;
        loop {
            // the last user left a confirmed subscription: keep it a moment for a quick return
            let linger = {
                let st = ch.state.lock();
                !lingered && st.subscribed && matches!(st.work(), Some(Change::Unsubscribe))
            };
            if linger {
                lingered = true;
                tokio::select! {
                    biased;
                    _ = crate::primitives::sleep(LINGER) => {}
                    _ = ch.kick.notified() => {}
                }
                continue;
            }
            let (change, was_maybe) = {
                let mut st = ch.state.lock();
                let change = st.work();
                let was_maybe = st.maybe_subscribed;
                match change {
                    Some(Change::Subscribe) => {
                        st.requested = false;
                        st.subscribing = true;
                        st.maybe_subscribed = true;
                    }
                    Some(Change::Unsubscribe) => st.subscribed = false,
                    None => {}
                }
                (change, was_maybe)
            };
            match change {
                None => {
                    let mut map = self.channels.lock();
                    let mut st = ch.state.lock();
                    if st.work().is_some() {
                        continue; // someone joined or left meanwhile
                    }
                    st.driving = false;
                    st.requested = false;
                    if st.users == 0 && map.get(&name).is_some_and(|cur| Arc::ptr_eq(cur, &ch)) {
                        map.remove(&name);
                    }
                    return;
                }
                Some(Change::Subscribe) => {
                    let res = self.command(Change::Subscribe, &name).await;
                    self.record(&res);
                    {
                        let mut st = ch.state.lock();
                        st.subscribing = false;
                        match res {
                            Ok(()) => {
                                (unsubscribe_failures, retry_at) = (0, None);
                                st.subscribed = true;
                                if !std::mem::replace(&mut st.counted, true) {
                                    crate::metrics::subscriptions(1.0);
                                }
                                tracing::trace!(channel = %name, commands = ?self.commands, "subscribed");
                            }
                            Err(f) => {
                                tracing::debug!(channel = %name, error = %f, "subscribe failed");
                                if f.refused() {
                                    st.maybe_subscribed = was_maybe;
                                }
                                st.failures += 1;
                                st.last_failure = Some(f);
                            }
                        }
                    }
                    ch.settled.notify_waiters();
                }
                Some(Change::Unsubscribe) => {
                    if let Some(at) = retry_at.filter(|at| Instant::now() < *at) {
                        // back off, unless a user arrives and wants the channel again
                        tokio::select! {
                            biased;
                            _ = crate::primitives::sleep_until(at.into()) => {}
                            _ = ch.kick.notified() => {}
                        }
                        continue;
                    }
                    let res = self.command(Change::Unsubscribe, &name).await;
                    self.record(&res);
                    match res {
                        Ok(()) => {
                            (unsubscribe_failures, retry_at) = (0, None);
                            let mut st = ch.state.lock();
                            st.maybe_subscribed = false;
                            if std::mem::take(&mut st.counted) {
                                crate::metrics::subscriptions(-1.0);
                            }
                            tracing::trace!(channel = %name, "unsubscribed");
                        }
                        Err(f) if unsubscribe_failures >= UNSUBSCRIBE_RETRIES => {
                            tracing::warn!(channel = %name, error = %f, "could not unsubscribe; giving up");
                            (unsubscribe_failures, retry_at) = (0, None);
                            let mut st = ch.state.lock();
                            st.maybe_subscribed = false;
                            if std::mem::take(&mut st.counted) {
                                crate::metrics::subscriptions(-1.0);
                            }
                        }
                        Err(f) => {
                            unsubscribe_failures += 1;
                            let delay = Health::backoff(unsubscribe_failures);
                            tracing::debug!(channel = %name, error = %f, ?delay, "unsubscribe failed; retrying");
                            retry_at = Some(Instant::now() + delay);
                        }
                    }
                }
            }
        }
    }
}
