//! The blocking twin of [`crate::CountDownLatch`]: every method is `block_on` of its async twin.

use std::sync::Arc;
use std::time::Duration;

use super::{Client, Rt};
use crate::error::Result;

/// A count-down latch for code without an async runtime (Redisson's `getCountDownLatch(name)`):
/// the blocking twin of [`crate::CountDownLatch`], with the same semantics per method.
///
/// # Panics
///
/// Every method panics when called from async code (see the [module docs](super)).
///
/// ```no_run
/// let client = redisson_lock::blocking::Client::connect("redis://127.0.0.1/")?;
/// let latch = client.count_down_latch("latch:import")?;
/// latch.try_set_count(1)?;
/// std::thread::spawn({
///     let latch = latch.clone();
///     move || latch.count_down()
/// });
/// latch.wait()?;
/// # Ok::<_, redisson_lock::Error>(())
/// ```
#[derive(Clone)]
pub struct CountDownLatch {
    rt: Arc<Rt>,
    latch: crate::CountDownLatch,
}

impl std::fmt::Debug for CountDownLatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("blocking::CountDownLatch")
            .field("key", &self.latch.key())
            .finish()
    }
}

impl CountDownLatch {
    /// The Redis key of the count.
    pub fn key(&self) -> &str {
        self.latch.key()
    }

    /// See [`crate::CountDownLatch::try_set_count`].
    pub fn try_set_count(&self, count: u64) -> Result<bool> {
        self.rt.block_on(self.latch.try_set_count(count))
    }

    /// See [`crate::CountDownLatch::count_down`].
    pub fn count_down(&self) -> Result<u64> {
        self.rt.block_on(self.latch.count_down())
    }

    /// See [`crate::CountDownLatch::count`].
    pub fn count(&self) -> Result<u64> {
        self.rt.block_on(self.latch.count())
    }

    /// See [`crate::CountDownLatch::delete`].
    pub fn delete(&self) -> Result<bool> {
        self.rt.block_on(self.latch.delete())
    }

    /// See [`crate::CountDownLatch::wait`]: blocks the calling thread until the count is zero.
    pub fn wait(&self) -> Result<()> {
        self.rt.block_on(self.latch.wait())
    }

    /// See [`crate::CountDownLatch::wait_for`].
    pub fn wait_for(&self, timeout: Duration) -> Result<bool> {
        self.rt.block_on(self.latch.wait_for(timeout))
    }

    /// The async latch behind this one.
    pub fn as_async(&self) -> &crate::CountDownLatch {
        &self.latch
    }
}

impl Client {
    /// A handle to the count-down latch `name`: the blocking twin of
    /// [`crate::Client::count_down_latch`].
    ///
    /// ```no_run
    /// # let client = redisson_lock::blocking::Client::connect("redis://127.0.0.1/")?;
    /// let latch = client.count_down_latch("latch:warmup")?;
    /// # Ok::<_, redisson_lock::Error>(())
    /// ```
    pub fn count_down_latch(&self, name: &str) -> Result<CountDownLatch> {
        Ok(CountDownLatch {
            rt: self.rt.clone(),
            latch: self.rt.client.count_down_latch(name)?,
        })
    }
}
