//! What one client shares with everything it made (handles, guards, background tasks): its id,
//! configuration, connections and per-client machinery. Below the lock kinds and the core; the
//! public [`Client`](crate::Client) is a handle to it.

use std::sync::Arc;

use crate::background::Background;
use crate::config::Config;
use crate::conn::Connection;
use crate::holds::Holds;
use crate::latch_janitor::LatchJanitor;
use crate::pubsub::Hub;

/// The state of one client.
pub(crate) struct ClientInner {
    pub id: String,
    pub config: Config,
    pub conn: Connection,
    pub hub: Arc<Hub>,
    pub holds: Arc<Holds>,
    /// Work that outlives the call that started it; shutdown waits for it.
    pub background: Arc<Background>,
    pub publish_cmd: &'static str,
    pub latches: LatchJanitor,
    /// Replica `WAIT` after writes (src/replica_sync.rs).
    pub replica_sync: Arc<crate::replica_sync::ReplicaSyncer>,
    /// Whether one call may carry keys of several hash slots (src/slots.rs).
    pub slots: Arc<crate::slots::Slots>,
    /// Keys that subscribed waiters wait on, checked in batches (src/gone_keys.rs).
    pub gone_keys: Arc<crate::gone_keys::GoneKeys>,
    /// Held keys the loss watch is to read (src/loss_watch.rs); collects nothing when it does
    /// not run.
    pub invalidated: Arc<crate::pubsub::Invalidated>,
}
