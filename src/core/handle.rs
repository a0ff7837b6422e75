//! The user-facing operations every lock handle offers, written once over the seam; the public
//! lock types (`RLock`, `RReadLock`, `RFencedLock`, ...) are thin, separately documented
//! wrappers that call these.

use std::future::Future;
use std::time::Duration;

use futures::FutureExt;

use crate::core::release::Releaser;
use crate::core::{Held, LockCore};
use crate::error::{Error, Result};
use crate::kind::AcquireKind;
use crate::owner::{OwnerId, OwnerSel};
use crate::Unlocked;

/// What a lock's remaining time to live is (Redisson's `remainTimeToLive`: -2 / -1 / ms).
///
/// ```no_run
/// # async fn demo(lock: redisson_lock::RLock) -> redisson_lock::Result<()> {
/// use redisson_lock::Ttl;
/// match lock.remain_time_to_live().await? {
///     Ttl::NotLocked => println!("free"),
///     Ttl::NoExpiry => println!("a key without TTL (not written by a lock client)"),
///     Ttl::Expires(d) => println!("expires in {d:?} unless renewed"),
///     _ => {}
/// }
/// # Ok(()) }
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Ttl {
    /// Nobody holds the lock (Redisson: `-2`).
    NotLocked,
    /// The key exists without a TTL (Redisson: `-1`); not written by any lock client.
    NoExpiry,
    /// The lock expires in this long unless renewed.
    Expires(Duration),
}

impl Ttl {
    pub(crate) fn from_pttl(ms: i64) -> Result<Ttl> {
        Ok(match ms {
            -2 => Ttl::NotLocked,
            -1 => Ttl::NoExpiry,
            ms if ms >= 0 => Ttl::Expires(Duration::from_millis(ms as u64)),
            other => return Err(Error::Protocol(format!("PTTL replied {other}"))),
        })
    }
}

impl<K: AcquireKind> LockCore<K> {
    pub(crate) fn with_owner(&self, owner: OwnerId) -> Self {
        let mut core = self.clone();
        core.owner = OwnerSel::Pinned(owner);
        core
    }

    pub(crate) fn handle_field(&self) -> Option<String> {
        self.owner.fixed().map(|o| self.field_of(o).to_string())
    }

    /// Waits as long as it takes.
    pub(crate) async fn lock(&self, lease: Option<Duration>) -> Result<Held<K>> {
        self.acquire(None, lease)
            .await?
            .ok_or_else(|| Error::Protocol("an unbounded wait ended without the lock".into()))
    }

    /// Waits up to `wait` (`ZERO`: one attempt).
    pub(crate) async fn try_lock(&self, wait: Duration, lease: Option<Duration>) -> Result<Option<Held<K>>> {
        self.acquire(Some(wait), lease).await
    }

    /// Runs `body` under the lock (watchdog mode), releasing afterwards and cancelling `body`
    /// with `Error::Lost` when the hold is lost meanwhile.
    pub(crate) async fn run<F: Future>(&self, body: F) -> Result<F::Output> {
        let guard = self.lock(None).await?;
        let lost = guard.lost();
        let outcome = tokio::select! {
            biased;
            out = std::panic::AssertUnwindSafe(body).catch_unwind() => Ok(out),
            reason = lost => Err(reason),
        };
        match outcome {
            Ok(Ok(value)) => {
                guard.unlock().await?;
                Ok(value)
            }
            Ok(Err(panic)) => {
                if let Err(e) = guard.unlock().await {
                    tracing::warn!(key = %self.key, error = %e, "release after a panic failed");
                }
                std::panic::resume_unwind(panic)
            }
            Err(reason) => {
                let err = Error::Lost {
                    key: guard.key().to_owned(),
                    field: guard.field().to_owned(),
                    reason,
                };
                drop(guard);
                Err(err)
            }
        }
    }

    /// Redisson-style unlock by the handle's owner (no guard).
    pub(crate) async fn unlock(&self) -> Result<Unlocked> {
        let field = self.field_of(self.fixed_owner()?);
        Releaser::of(self).release_any(&field).await
    }

    pub(crate) async fn force_unlock(&self) -> Result<bool> {
        Releaser::of(self).force().await
    }

    pub(crate) async fn is_held_by(&self, owner: OwnerId) -> Result<bool> {
        let field = self.field_of(owner);
        let n: i64 = self
            .query(redis::cmd("HEXISTS").arg(&*self.key).arg(&*field))
            .await?;
        Ok(n == 1)
    }

    pub(crate) async fn is_held(&self) -> Result<bool> {
        self.is_held_by(self.fixed_owner()?).await
    }

    pub(crate) async fn hold_count(&self) -> Result<u64> {
        let field = self.field_of(self.fixed_owner()?);
        let n: Option<u64> = self
            .query(redis::cmd("HGET").arg(&*self.key).arg(&*field))
            .await?;
        Ok(n.unwrap_or(0))
    }

    pub(crate) async fn remain_time_to_live(&self) -> Result<Ttl> {
        let ms: i64 = self.query(redis::cmd("PTTL").arg(&*self.key)).await?;
        Ttl::from_pttl(ms)
    }

    /// `EXISTS key` (Redisson's `isLocked()` for RLock-shaped kinds).
    pub(crate) async fn exists(&self) -> Result<bool> {
        let n: i64 = self.query(redis::cmd("EXISTS").arg(&*self.key)).await?;
        Ok(n == 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ttl_from_pttl() {
        assert_eq!(Ttl::from_pttl(-2).unwrap(), Ttl::NotLocked);
        assert_eq!(Ttl::from_pttl(-1).unwrap(), Ttl::NoExpiry);
        assert_eq!(
            Ttl::from_pttl(1500).unwrap(),
            Ttl::Expires(Duration::from_millis(1500))
        );
        assert!(Ttl::from_pttl(-7).is_err());
    }
}
