//! Turns: the right to change one field's count, taken before a request is planned and kept
//! until its outcome is recorded (or, for a request whose outcome is unknown, until it is
//! settled), so that every request of one owner is planned against a known state.
//!
//! The table counts the turns taken. Every request that may be in Redis holds one, so a client
//! that shuts down knows when nothing of it is in flight any more: [`Holds::wait_idle`]. Once the
//! table is closed no acquisition takes a turn; releases and give-ups still do.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use super::{idle, Holds, Table};
use crate::error::{Error, Result};
use crate::kind::Kind;
use crate::primitives::Notify;

/// The right to change one field's count: held from before a request is planned until its
/// outcome is recorded. Dropping it lets the next operation on the field go.
pub(crate) struct Turn {
    pub(super) holds: Arc<Holds>,
    pub(super) key: Arc<str>,
    pub(super) field: Arc<str>,
    /// The field had no epoch when the turn was taken. Only an operation holding the turn
    /// starts one, so it still has none until this turn records a grant (which clears this):
    /// an acquisition plans against nothing held without looking.
    pub(super) fresh: AtomicBool,
    /// Given back already (by [`Holds::grant_passing`]): dropping it does nothing more.
    pub(super) passed: bool,
}

impl Turn {
    pub(crate) fn field(&self) -> &Arc<str> {
        &self.field
    }
}

impl Drop for Turn {
    fn drop(&mut self) {
        if self.passed {
            return;
        }
        let mut t = self.holds.table.lock();
        self.holds.turn_returned(&mut t);
        // `Table::tidy` after freeing the turn, with one lookup of the key
        let Some(owners) = t.locks.get_mut(&*self.key) else {
            return;
        };
        let unused = owners.get(&self.field).is_some_and(|r| {
            let mut s = r.lock();
            s.busy = false;
            s.wake();
            idle(&s)
        });
        if unused {
            owners.remove(&self.field);
        }
        if owners.is_empty() {
            t.locks.remove(&*self.key);
        }
    }
}

/// Why a turn was not taken now.
enum Blocked {
    /// Another operation on the field holds it: wait on this.
    Busy(Arc<Notify>),
    /// The client is shutting down: no acquisition starts.
    Closed,
}

impl Holds {
    /// Takes the turn of `field` on `key` for a release or a give-up (allowed while the client
    /// shuts down), waiting while another operation on it is in flight.
    pub(crate) async fn turn(
        self: &Arc<Self>,
        key: &Arc<str>,
        field: &Arc<str>,
        kind: &'static dyn Kind,
    ) -> Turn {
        match self.wait_turn(key, field, kind, false).await {
            Ok(t) => t,
            // only acquisitions are refused
            Err(_) => unreachable!("a release's turn is never refused"),
        }
    }

    /// Takes the turn of `field` on `key` for an acquisition, waiting while another operation
    /// on it is in flight. [`Error::Shutdown`] once the client shuts down (also while waiting).
    pub(crate) async fn turn_to_acquire(
        self: &Arc<Self>,
        key: &Arc<str>,
        field: &Arc<str>,
        kind: &'static dyn Kind,
    ) -> Result<Turn> {
        self.wait_turn(key, field, kind, true).await
    }

    /// The turn of `field` on `key` for an acquisition if it is free now (the common case:
    /// nothing is sent for the field at the moment), without waiting.
    pub(crate) fn try_turn_to_acquire(
        self: &Arc<Self>,
        key: &Arc<str>,
        field: &Arc<str>,
        kind: &'static dyn Kind,
    ) -> Result<Option<Turn>> {
        match self.take_turn(key, field, kind, true) {
            Ok(t) => Ok(Some(t)),
            Err(Blocked::Busy(_)) => Ok(None),
            Err(Blocked::Closed) => Err(Error::Shutdown),
        }
    }

    async fn wait_turn(
        self: &Arc<Self>,
        key: &Arc<str>,
        field: &Arc<str>,
        kind: &'static dyn Kind,
        acquire: bool,
    ) -> Result<Turn> {
        loop {
            let waiters = match self.take_turn(key, field, kind, acquire) {
                Ok(turn) => return Ok(turn),
                Err(Blocked::Closed) => return Err(Error::Shutdown),
                Err(Blocked::Busy(waiters)) => waiters,
            };
            let notified = waiters.notified();
            let mut notified = std::pin::pin!(notified);
            notified.as_mut().enable();
            // the record may have been replaced (a new epoch) or the turn given back meanwhile;
            // a replaced record's waiters are woken (and so are all at shutdown), so waiting on
            // this one is enough
            let still_busy = {
                let t = self.table.lock();
                !(acquire && t.closed)
                    && t.get(key, field).is_some_and(|r| {
                        let mut s = r.lock();
                        s.busy && Arc::ptr_eq(&s.waiters(), &waiters)
                    })
            };
            if still_busy {
                notified.await;
            }
        }
    }

    /// Takes the turn if free; else why not.
    fn take_turn(
        self: &Arc<Self>,
        key: &Arc<str>,
        field: &Arc<str>,
        kind: &'static dyn Kind,
        acquire: bool,
    ) -> Result<Turn, Blocked> {
        let mut t = self.table.lock();
        if acquire && t.closed {
            return Err(Blocked::Closed);
        }
        let started = {
            let mut s = t.entry(key, field, kind).lock();
            if s.busy {
                return Err(Blocked::Busy(s.waiters()));
            }
            s.busy = true;
            s.started
        };
        t.turns += 1;
        Ok(Turn {
            holds: self.clone(),
            key: key.clone(),
            field: field.clone(),
            fresh: AtomicBool::new(!started),
            passed: false,
        })
    }

    /// Counts a turn given back (under the table's lock); the last one of a closed table wakes
    /// [`wait_idle`](Self::wait_idle).
    pub(super) fn turn_returned(&self, t: &mut Table) {
        t.turns -= 1;
        if t.turns == 0 && t.closed {
            self.idle.notify_waiters();
        }
    }

    /// Waits until no turn is taken: no request of this client is in flight or being settled.
    /// Meant for shutdown, once the table is closed (no acquisition can start one).
    pub(crate) async fn wait_idle(&self) {
        loop {
            let idle = self.idle.notified();
            let mut idle = std::pin::pin!(idle);
            idle.as_mut().enable();
            if self.table.lock().turns == 0 {
                return;
            }
            idle.await;
        }
    }

    /// Whether no turn is taken.
    pub(crate) fn is_idle(&self) -> bool {
        self.table.lock().turns == 0
    }

    /// The keys of the fields whose turn is taken (requests in flight or being settled).
    pub(crate) fn busy_keys(&self) -> Vec<Arc<str>> {
        let t = self.table.lock();
        let mut keys = Vec::new();
        for (key, owners) in t.locks.iter() {
            owners.for_each(|r| {
                if r.lock().busy {
                    keys.push(key.clone());
                }
            });
        }
        keys
    }
}
