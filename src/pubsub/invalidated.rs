//! Keys the server says changed: the invalidation pushes of `CLIENT TRACKING` on the pub/sub
//! connection, collected for the loss watch (`src/loss_watch.rs`), which re-reads the holds on
//! them. Also what a dropped connection means for it: tracking is gone with the connection, so
//! every hold is to be re-read (and tracking turned on again) once it is back.
//!
//! Collecting is cheap and never blocks the push handler: a set of keys (a key changed twice
//! before the watch looked is read once) and two flags. Nothing is collected while the watch is
//! not active, so a client without it keeps no state here.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

use crate::conn::Connection;
use crate::primitives::{Mutex, Notify};

/// What the loss watch has to look at.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct ToCheck {
    /// Keys that changed (or that a new hold needs read, so that they are tracked).
    pub keys: HashSet<Arc<str>>,
    /// Those of `keys` that only a new hold put there (nothing reported them changed).
    pub fresh: HashSet<Arc<str>>,
    /// Every key: the server flushed its keyspace (an invalidation without keys).
    pub all: bool,
    /// The connection dropped: tracking must be turned on again before anything is read.
    pub reconnect: bool,
    /// Something is reported changed (not only new holds to track): read at once.
    pub urgent: bool,
}

impl ToCheck {
    pub(crate) fn is_empty(&self) -> bool {
        self.keys.is_empty() && !self.all && !self.reconnect
    }
}

/// Keys the server says changed, and the wake-up of the loss watch.
#[derive(Default)]
pub(crate) struct Invalidated {
    /// A loss watch runs: collect.
    active: AtomicBool,
    /// The server tracks held keys for the loss watch's own connection, with `NOLOOP` (see
    /// `loss_watch`): the renewals and lease extensions sent on it are not pushed back, and
    /// they read the keys they write in their own script, which keeps them tracked.
    no_echo: AtomicBool,
    /// That connection, once opened: nothing but the renewals, the lease extensions and the
    /// watch's reads of held keys is sent on it.
    tracker: OnceLock<Connection>,
    pending: Mutex<ToCheck>,
    wake: Notify,
}

impl Invalidated {
    /// The loss watch starts (or stops) collecting.
    pub(crate) fn set_active(&self, active: bool) {
        self.active.store(active, Ordering::SeqCst);
        if !active {
            *self.pending.lock() = ToCheck::default();
        }
    }

    /// The client shuts down: the loss watch stops (it is woken to see it).
    pub(crate) fn stop(&self) {
        self.set_active(false);
        self.wake.notify_one();
    }

    pub(crate) fn is_active(&self) -> bool {
        self.active.load(Ordering::SeqCst)
    }

    /// Whether held keys are tracked for the loss watch's own connection with `NOLOOP` (see the
    /// field).
    pub(crate) fn no_echo(&self) -> bool {
        self.is_active() && self.no_echo.load(Ordering::SeqCst)
    }

    /// The connection that renews and extends held keys: the loss watch's own while held keys
    /// are tracked for it (its writes are then not pushed back), else `None` (the command
    /// connection).
    pub(crate) fn tracker(&self) -> Option<&Connection> {
        self.tracker.get().filter(|_| self.no_echo())
    }

    /// The loss watch's own connection (set once, when the client is built).
    pub(crate) fn set_tracker(&self, conn: Connection) {
        let _ = self.tracker.set(conn);
    }

    /// How a lost hold is learnt now.
    pub(crate) fn signal(&self) -> crate::LossSignal {
        match (self.is_active(), self.no_echo()) {
            (false, _) => crate::LossSignal::Renewal,
            (true, false) => crate::LossSignal::Tracking,
            (true, true) => crate::LossSignal::TrackingWithoutEcho,
        }
    }

    pub(crate) fn set_no_echo(&self, on: bool) {
        self.no_echo.store(on, Ordering::SeqCst);
    }

    /// How many keys wait to be read.
    pub(crate) fn pending_keys(&self) -> usize {
        self.pending.lock().keys.len()
    }

    /// Whether `key` is reported changed and not taken yet (the tracking probe's key).
    pub(crate) fn has(&self, key: &str) -> bool {
        self.pending.lock().keys.contains(key)
    }

    /// Forgets that `key` was reported (the tracking probe's key, which holds nothing).
    pub(crate) fn forget(&self, key: &str) {
        self.pending.lock().keys.remove(key);
    }

    fn add(&self, urgent: bool, f: impl FnOnce(&mut ToCheck)) {
        if !self.is_active() {
            return;
        }
        let wake = {
            let mut p = self.pending.lock();
            // the watch takes everything pending at once: it is woken by the first addition,
            // and again by the first urgent one (it may be gathering new holds meanwhile)
            let wake = p.is_empty() || (urgent && !p.urgent);
            f(&mut p);
            p.urgent |= urgent;
            wake
        };
        if wake {
            self.wake.notify_one();
        }
    }

    /// The server says `keys` changed.
    pub(crate) fn keys<I: IntoIterator<Item = Arc<str>>>(&self, keys: I) {
        self.add(true, |p| {
            for k in keys {
                p.fresh.remove(&k);
                p.keys.insert(k);
            }
        });
    }

    /// `key` is to be read: a new hold on it (reading it makes the server track it). Not urgent:
    /// the watch gathers these for a few ms, and a hold released meanwhile is never read.
    pub(crate) fn key(&self, key: &Arc<str>) {
        if self.is_active() {
            self.add(false, |p| {
                if p.keys.insert(key.clone()) {
                    p.fresh.insert(key.clone());
                }
            });
        }
    }

    /// Every key changed (`FLUSHALL`, `FLUSHDB`).
    pub(crate) fn everything(&self) {
        self.add(true, |p| p.all = true);
    }

    /// The connection dropped.
    pub(crate) fn disconnected(&self) {
        self.add(true, |p| {
            p.all = true;
            p.reconnect = true;
        });
    }

    /// Takes what is pending: at most `max` keys (the rest stays pending, and urgent if it
    /// was), or everything when every key is to be read anyway.
    pub(crate) fn take(&self, max: usize) -> ToCheck {
        let mut p = self.pending.lock();
        if p.all || p.keys.len() <= max {
            return std::mem::take(&mut *p);
        }
        let keys: HashSet<Arc<str>> = p.keys.iter().take(max).cloned().collect();
        let mut fresh = HashSet::new();
        for k in &keys {
            p.keys.remove(k);
            if p.fresh.remove(k) {
                fresh.insert(k.clone());
            }
        }
        ToCheck {
            keys,
            fresh,
            all: false,
            reconnect: false,
            urgent: p.urgent,
        }
    }

    /// Puts back what could not be handled (it is handled with what came meanwhile).
    pub(crate) fn put_back(&self, p: ToCheck) {
        let mut cur = self.pending.lock();
        for k in p.keys {
            if p.fresh.contains(&k) && !cur.keys.contains(&k) {
                cur.fresh.insert(k.clone());
            }
            cur.keys.insert(k);
        }
        cur.all |= p.all;
        cur.reconnect |= p.reconnect;
        cur.urgent |= p.urgent;
    }

    /// Waits until something is pending or the watch is stopped (returns at once if so).
    pub(crate) async fn changed(&self) {
        self.wait_for(|p| !p.is_empty()).await
    }

    /// Waits until something urgent is pending or the watch is stopped.
    pub(crate) async fn urgent(&self) {
        self.wait_for(|p| p.urgent).await
    }

    async fn wait_for(&self, ready: impl Fn(&ToCheck) -> bool) {
        loop {
            let woken = self.wake.notified();
            let mut woken = std::pin::pin!(woken);
            woken.as_mut().enable();
            if !self.is_active() || ready(&self.pending.lock()) {
                return;
            }
            woken.await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_round_takes_a_slice_of_the_changed_keys_and_leaves_the_rest_urgent() {
        let inv = Invalidated::default();
        inv.set_active(true);
        inv.keys((0..10).map(|i| Arc::from(format!("k{i}"))));
        let first = inv.take(4);
        assert_eq!(first.keys.len(), 4);
        assert!(first.urgent);
        let rest = inv.take(100);
        assert_eq!(rest.keys.len(), 6);
        assert!(rest.urgent, "what is left of a reported change stays urgent");
        assert!(first.keys.is_disjoint(&rest.keys));
        assert!(inv.take(100).is_empty());
        // a flush (every key) is taken whole
        inv.keys((0..10).map(|i| Arc::from(format!("k{i}"))));
        inv.everything();
        let all = inv.take(4);
        assert!(all.all);
        assert_eq!(all.keys.len(), 10);
        assert!(inv.take(4).is_empty());
    }
}
