//! An acquisition of permits whose reply may be lost. Its script records a grant in the attempt's
//! latch (`redisson_unlock_latch:{N}:<attempt id>`), so instead of sending it again (which could
//! take permits twice) the client asks Redis whether it was granted, making sure that it never
//! will be if it was not (`lua/common/resolve_acquire.lua`). A grant nobody is left to use (the
//! caller gave up or was dropped, or the client is shutting down) is given back at once, in the
//! background.
//!
//! From the moment it is sent until its outcome is known, an attempt counts as the client's open
//! work (a background [`Ticket`]): [`Client::shutdown`](crate::Client::shutdown) waits for it,
//! and for the give-back of what it was granted.

use std::sync::Arc;
use std::time::Instant;

use redis::{ScriptInvocation, Value};

use crate::background::Ticket;
use crate::error::{Error, Result};
use crate::inner::ClientInner;
use crate::once::Once;
use crate::script;
use crate::settle::Unsettled;

/// How a synchronizer gives back what an abandoned acquisition took.
pub(crate) trait GiveBack: Send + Sync + 'static {
    /// What is given back, for logs (`"semaphore: release"`).
    const WHAT: &'static str;

    /// The write that gives it back, with its request latch and how long to keep its reply in
    /// ms (a write applied once, see [`Once`]).
    fn give_back(&self, latch: &str, keep_ms: u64) -> ScriptInvocation<'static>;
}

/// An acquisition attempt whose outcome is not known yet. Dropped armed, it is settled in the
/// background; call [`Pending::land`] once the reply says what happened.
pub(crate) struct Pending<G: GiveBack> {
    client: Arc<ClientInner>,
    key: Arc<str>,
    latch: String,
    sent_at: Instant,
    give_back: Option<G>,
    /// Open work until the outcome is known, or the give-back is queued (a field is dropped
    /// after `drop` runs, so the give-back is queued first).
    _open: Ticket,
}

impl<G: GiveBack> Pending<G> {
    /// The attempt writing `latch`, about to be sent; `give_back` undoes its grant.
    pub(crate) fn new(client: &Arc<ClientInner>, key: &Arc<str>, latch: String, give_back: G) -> Pending<G> {
        Pending {
            client: client.clone(),
            key: key.clone(),
            latch,
            sent_at: Instant::now(),
            give_back: Some(give_back),
            _open: client.background.ticket(key),
        }
    }

    /// The reply arrived and was read: nothing to settle. `granted`: its latch recorded a
    /// grant, which the janitor deletes (a refusal wrote none). Returns the give-back, for a
    /// grant the caller must undo itself (see [`give_back`]). A grant that arrives once the
    /// client is shutting down is given back in the background: [`Error::Shutdown`].
    pub(crate) fn land(mut self, granted: bool) -> Result<Option<G>> {
        if granted {
            self.client.latches.discard(std::mem::take(&mut self.latch));
            if self.client.holds.is_closed() {
                return Err(self.give_back_closed());
            }
        }
        Ok(self.give_back.take())
    }

    /// Asks Redis whether the attempt was granted: `Ok(true)` it was (the caller keeps it);
    /// `Ok(false)` it was not, and now never will be. On `Err` nothing is known yet (dropping
    /// `self` then settles it in the background). A grant found once the client is shutting
    /// down is given back in the background: [`Error::Shutdown`].
    pub(crate) async fn settle(mut self) -> Result<bool> {
        let granted = resolve(&self.client, &self.key, &self.latch).await?;
        if granted {
            self.client.latches.discard(std::mem::take(&mut self.latch));
            if self.client.holds.is_closed() {
                return Err(self.give_back_closed());
            }
        }
        self.give_back = None;
        Ok(granted)
    }

    /// Queues the give-back of a grant that came while the client was shutting down (before
    /// this attempt's ticket is dropped, so shutdown waits for it).
    fn give_back_closed(&mut self) -> Error {
        if let Some(g) = self.give_back.take() {
            tracing::info!(key = %self.key, what = G::WHAT, "granted while the client was shutting down: giving it back");
            let (client, key) = (self.client.clone(), self.key.clone());
            let job: crate::background::Job = Box::new(move || {
                Box::pin(async move {
                    let once = Once::new(&client, &key, G::WHAT, true, |l, ms| g.give_back(l, ms));
                    once.send::<Value>().await.map(|_| ())
                })
            });
            if !self.client.background.push(&self.key, job) {
                tracing::warn!(key = %self.key, what = G::WHAT, "granted after the client stopped: not given back");
            }
        }
        Error::Shutdown
    }
}

/// Gives back at once what a granted acquisition took (a write applied once, finished in the
/// background if the caller is dropped): how an acquisition no replica confirmed is undone.
pub(crate) async fn give_back<G: GiveBack>(client: &Arc<ClientInner>, key: &Arc<str>, g: G) -> Result<()> {
    let once = Once::new(client, key, G::WHAT, true, |l, ms| g.give_back(l, ms));
    once.send::<Value>().await.map(|_| ())
}

/// Whether the attempt that writes `latch` was granted, making sure it never will be if not.
async fn resolve(client: &ClientInner, key: &str, latch: &str) -> Result<bool> {
    let cfg = &client.config;
    let mut inv = script::RESOLVE_ACQUIRE.prepare_invoke();
    // a copy of the request still on its way finds the marker for as long as a grant's record
    // would live
    inv.key(latch).arg(cfg.settle_window_ms());
    let v: Value = script::run(&client.conn, cfg.command_timeout, key, &inv).await?;
    match v {
        Value::Array(items) => match items.first() {
            Some(Value::Int(1)) => Ok(true),
            Some(Value::Int(0)) => Ok(false),
            _ => Err(Error::Protocol(format!("unexpected settle reply {items:?}"))),
        },
        other => Err(Error::Protocol(format!("unexpected settle reply {other:?}"))),
    }
}

impl<G: GiveBack> Drop for Pending<G> {
    fn drop(&mut self) {
        let Some(give_back) = self.give_back.take() else {
            return;
        };
        crate::settle::settle_in_background(Abandoned {
            client: self.client.clone(),
            key: self.key.clone(),
            latch: std::mem::take(&mut self.latch),
            sent_at: self.sent_at,
            give_back,
        });
    }
}

/// An acquisition nobody waits for any more, settled by [`crate::settle`].
struct Abandoned<G: GiveBack> {
    client: Arc<ClientInner>,
    key: Arc<str>,
    latch: String,
    sent_at: Instant,
    give_back: G,
}

impl<G: GiveBack> Unsettled for Abandoned<G> {
    type Found = ();

    fn client(&self) -> &Arc<ClientInner> {
        &self.client
    }

    fn key(&self) -> &Arc<str> {
        &self.key
    }

    fn sent_at(&self) -> Instant {
        self.sent_at
    }

    async fn ask(&self) -> Result<Option<()>> {
        Ok(resolve(&self.client, &self.key, &self.latch).await?.then_some(()))
    }

    async fn give_back(self, (): ()) -> Result<()> {
        self.client.latches.discard(self.latch);
        give_back(&self.client, &self.key, self.give_back).await
    }
}
