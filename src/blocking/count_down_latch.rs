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

    super::twins! {"crate::CountDownLatch", latch;
        fn try_set_count(count: u64) -> bool;
        fn count_down() -> u64;
        fn count() -> u64;
        fn delete() -> bool;
        fn wait() -> ();
        fn wait_for(timeout: Duration) -> bool;
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
