//! The measurements, one file per report section, each an `impl Bench` block that appends its
//! table to `md` and its raw numbers to `json`.

use std::sync::Arc;

use redis::aio::ConnectionManager;
use serde_json::Value;

use crate::jvm::Jvm;
use crate::raw::Raw;
use crate::scale::Scale;

mod handoff;
mod latency;
mod loss_signal;
mod many_waited;
mod replica_sync;
pub(crate) mod server_cost;
mod throughput;
mod watchdog;

pub(crate) struct Bench {
    pub(crate) url: String,
    pub(crate) scale: Scale,
    pub(crate) admin: ConnectionManager,
    pub(crate) raw: Raw,
    pub(crate) jvm: Option<Arc<std::sync::Mutex<Jvm>>>,
    pub(crate) java_note: String,
    pub(crate) json: serde_json::Map<String, Value>,
    pub(crate) md: String,
    pub(crate) tck: f64,
    /// EVALSHA round trip p50 (µs), from measurement 1.
    pub(crate) rtt_us: f64,
}
