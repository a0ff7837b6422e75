//! Redisson's semaphores, sharing one counter layout: [`Semaphore`] (`RSemaphore`) and
//! [`PermitExpirableSemaphore`] (`RPermitExpirableSemaphore`), plus the Rust extras: a guard
//! that gives permits back on drop, and permit ids shown as Java shows them.
//!
//! The layout is Redisson's (`docs/protocol.md`, "Semaphores"): the available permits are a
//! decimal string at the semaphore's name, without a TTL unless one is set; waiters listen on
//! `redisson_sc:{<name>}`, whose messages are the number of permits now available (or, for two
//! expirable-semaphore calls, the number given back). The expirable semaphore keeps its permits
//! held under ids in the sorted set `{<name>}:timeout` (member: the 16-byte id, score: when its
//! lease ends, in epoch ms).

mod expirable;
mod guard;
mod permit_guard;
mod permit_id;
mod plain;

pub(crate) use expirable::{leases, LAYOUT as EXPIRABLE_LAYOUT};
pub use expirable::{PermitExpirableSemaphore, PermitLease};
pub use guard::SemaphoreGuard;
pub use permit_guard::PermitGuard;
pub use permit_id::PermitId;
pub use plain::Semaphore;
pub(crate) use plain::LAYOUT as SEMAPHORE_LAYOUT;

use std::sync::Arc;

use crate::error::{Error, Result};

/// The most permits one call takes, gives or sets, and the bound of every synchronizer count
/// kept through this crate: 2^53 − 1, the largest integer the scripts' Lua numbers hold exactly.
/// A semaphore's count stays within ±`MAX_PERMITS` and a count-down latch's count at most
/// `MAX_PERMITS`: an argument beyond it is [`Error::InvalidArgument`], a change that would take a
/// count beyond it (or a count already beyond it in Redis, written by hand or by another client)
/// is [`Error::OutOfRange`], and nothing is written.
pub const MAX_PERMITS: u64 = (1 << 53) - 1;

/// The semaphore channel of `key`: `redisson_sc:{<key>}` (in the key's cluster slot).
pub(crate) fn channel(key: &str) -> String {
    crate::name::prefix_name("redisson_sc", key)
}

/// `permits` as a script argument: 1 ..= [`MAX_PERMITS`].
pub(crate) fn permits(key: &str, permits: u64) -> Result<i64> {
    if permits == 0 || permits > MAX_PERMITS {
        return Err(Error::InvalidArgument(format!(
            "semaphore `{key}`: {permits} permits (1 ..= {MAX_PERMITS})"
        )));
    }
    Ok(permits as i64)
}

/// A signed count of permits (a new count, a change): within ±[`MAX_PERMITS`].
pub(crate) fn count(key: &str, count: i64) -> Result<i64> {
    if count.unsigned_abs() > MAX_PERMITS {
        return Err(Error::InvalidArgument(format!(
            "semaphore `{key}`: {count} permits (at most ±{MAX_PERMITS})"
        )));
    }
    Ok(count)
}

/// The state the handles of both kinds share.
#[derive(Clone)]
pub(crate) struct Shared {
    pub client: Arc<crate::inner::ClientInner>,
    pub key: Arc<str>,
    pub channel: Arc<str>,
}

impl Shared {
    pub(crate) fn new(client: Arc<crate::inner::ClientInner>, key: String) -> Shared {
        let channel = channel(&key);
        Shared {
            client,
            key: key.into(),
            channel: channel.into(),
        }
    }

    /// The available permits: `GET` of the counter (0 when there is no semaphore).
    pub(crate) async fn get(&self) -> Result<i64> {
        let mut get = redis::cmd("GET");
        get.arg(&*self.key);
        let cfg = &self.client.config;
        let v: Option<String> =
            crate::script::read(&self.client.conn, cfg.command_timeout, &self.key, &get).await?;
        match v {
            None => Ok(0),
            Some(text) => text.parse::<i64>().map_err(|_| {
                Error::Protocol(format!("semaphore `{}` holds `{text}`, not a count", self.key))
            }),
        }
    }

    /// Changes the available permits by `delta` with `script` (each kind's `addPermits`, which
    /// differ in what they publish; both take the count, the channel and a request latch, then
    /// the change, the publish mode and the latch TTL): the new count.
    pub(crate) async fn add_permits(
        &self,
        what: &'static str,
        script: &'static crate::script::Lua,
        delta: i64,
    ) -> Result<i64> {
        let delta = count(&self.key, delta)?;
        let once = crate::once::Once::new(&self.client, &self.key, what, false, |latch, ms| {
            let mut inv = script.prepare_invoke();
            inv.key(&*self.key)
                .key(&*self.channel)
                .key(latch)
                .arg(delta)
                .arg(self.client.publish_cmd)
                .arg(ms);
            inv
        });
        let total: i64 = once.send().await?;
        tracing::debug!(key = %self.key, delta, total, what, "permits added");
        Ok(total)
    }

    /// Refuses new work once the client is shutting down.
    pub(crate) fn open(&self) -> Result<()> {
        if self.client.holds.is_closed() {
            return Err(Error::Shutdown);
        }
        Ok(())
    }
}
