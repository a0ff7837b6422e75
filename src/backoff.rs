//! Waiting without pub/sub: Redisson's back-off policies (`LockOptions.BackOff`), used by kinds
//! whose wake policy is [`Wake::Backoff`](crate::kind::Wake::Backoff) (the spin lock).

use std::time::Duration;

use crate::config::millis;
use crate::error::{Error, Result};

/// How a spin-lock waiter sleeps between attempts (Redisson's `LockOptions.BackOff`).
///
/// * [`BackOff::exponential`] (the default): sleeps start at `initial` (1 ms); each next one is
///   the previous times `multiplier` (2) plus a random jitter of `0..n` ms after `n` failures,
///   capped at `max` (128 ms), as Redisson's `ExponentialBackOff`.
/// * [`BackOff::constant`]: always the same sleep (Redisson's `ConstantBackOff`, 64 ms).
///
/// ```
/// use std::time::Duration;
/// use redisson_lock::BackOff;
/// let b = BackOff::exponential()
///     .with_initial(Duration::from_millis(10))
///     .with_max(Duration::from_millis(100))
///     .with_multiplier(3);
/// let mut p = b.policy();
/// assert_eq!(p.next_sleep(), Duration::from_millis(10));
/// let second = p.next_sleep();
/// assert!(second >= Duration::from_millis(30) && second <= Duration::from_millis(31));
/// assert_eq!(BackOff::constant(Duration::from_millis(64)).policy().next_sleep(), Duration::from_millis(64));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum BackOff {
    /// Growing sleeps: `initial`, then ×`multiplier` plus jitter, up to `max`.
    Exponential {
        /// The first sleep.
        initial: Duration,
        /// The longest sleep.
        max: Duration,
        /// The growth factor.
        multiplier: u32,
    },
    /// The same sleep every time.
    Constant(Duration),
}

impl Default for BackOff {
    fn default() -> Self {
        BackOff::exponential()
    }
}

impl BackOff {
    /// Redisson's default: exponential from 1 ms, ×2 plus jitter, capped at 128 ms.
    pub fn exponential() -> BackOff {
        BackOff::Exponential {
            initial: Duration::from_millis(1),
            max: Duration::from_millis(128),
            multiplier: 2,
        }
    }

    /// A constant sleep (Redisson's `ConstantBackOff` default is 64 ms).
    pub fn constant(delay: Duration) -> BackOff {
        BackOff::Constant(delay)
    }

    /// The same exponential back-off starting at `initial` (ignored by a constant one).
    pub fn with_initial(self, initial: Duration) -> BackOff {
        match self {
            BackOff::Exponential { max, multiplier, .. } => BackOff::Exponential {
                initial,
                max,
                multiplier,
            },
            c => c,
        }
    }

    /// The same exponential back-off capped at `max` (ignored by a constant one).
    pub fn with_max(self, max: Duration) -> BackOff {
        match self {
            BackOff::Exponential {
                initial, multiplier, ..
            } => BackOff::Exponential {
                initial,
                max,
                multiplier,
            },
            c => c,
        }
    }

    /// The same exponential back-off growing by `multiplier` (ignored by a constant one).
    pub fn with_multiplier(self, multiplier: u32) -> BackOff {
        match self {
            BackOff::Exponential { initial, max, .. } => BackOff::Exponential {
                initial,
                max,
                multiplier,
            },
            c => c,
        }
    }

    /// Checks the values (at least 1 ms, at most [`MAX_DURATION`](crate::MAX_DURATION), a
    /// multiplier of at least 1, `initial <= max`).
    pub(crate) fn validate(&self) -> Result<()> {
        match *self {
            BackOff::Exponential {
                initial,
                max,
                multiplier,
            } => {
                millis("back-off initial delay", initial)?;
                millis("back-off max delay", max)?;
                if multiplier == 0 {
                    return Err(Error::InvalidArgument(
                        "back-off multiplier must be at least 1".into(),
                    ));
                }
                if initial > max {
                    return Err(Error::InvalidArgument(format!(
                        "back-off initial delay {initial:?} is above its max {max:?}"
                    )));
                }
                Ok(())
            }
            BackOff::Constant(d) => millis("back-off delay", d).map(drop),
        }
    }

    /// A fresh sequence of sleeps (one per acquisition).
    pub fn policy(&self) -> BackOffPolicy {
        BackOffPolicy {
            backoff: *self,
            next: match *self {
                BackOff::Exponential { initial, .. } => initial,
                BackOff::Constant(d) => d,
            },
            fails: 0,
        }
    }
}

/// The sleeps of one waiter (see [`BackOff`]).
///
/// ```
/// let mut p = redisson_lock::BackOff::exponential().policy();
/// assert_eq!(p.next_sleep(), std::time::Duration::from_millis(1));
/// ```
#[derive(Clone, Debug)]
pub struct BackOffPolicy {
    backoff: BackOff,
    next: Duration,
    fails: u32,
}

impl BackOffPolicy {
    /// The next sleep.
    pub fn next_sleep(&mut self) -> Duration {
        match self.backoff {
            BackOff::Constant(d) => d,
            BackOff::Exponential { max, multiplier, .. } => {
                if self.next >= max {
                    return max;
                }
                let now = self.next;
                self.fails = self.fails.saturating_add(1);
                let jitter = Duration::from_millis(fastrand::u64(..u64::from(self.fails)));
                self.next = now.saturating_mul(multiplier).saturating_add(jitter).min(max);
                now
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Redisson's LockOptionsTest.testExponentialBackoff: 10, 30, 90, 100, 100 (with jitter).
    #[test]
    fn exponential_backoff_follows_redisson() {
        let mut p = BackOff::exponential()
            .with_initial(Duration::from_millis(10))
            .with_max(Duration::from_millis(100))
            .with_multiplier(3)
            .policy();
        let ms = |d: Duration| d.as_millis() as u64;
        assert_eq!(ms(p.next_sleep()), 10);
        assert!((30..=31).contains(&ms(p.next_sleep())));
        assert!((90..=93).contains(&ms(p.next_sleep())));
        assert_eq!(ms(p.next_sleep()), 100);
        assert_eq!(ms(p.next_sleep()), 100);
        // the default: 1 ms doubling to 128 ms
        let mut d = BackOff::exponential().policy();
        let sleeps: Vec<u64> = (0..12).map(|_| ms(d.next_sleep())).collect();
        assert_eq!(sleeps[0], 1);
        assert!(sleeps.windows(2).all(|w| w[0] <= w[1]), "{sleeps:?}");
        assert_eq!(*sleeps.last().unwrap(), 128);
    }

    #[test]
    fn constant_backoff_and_validation() {
        let mut c = BackOff::constant(Duration::from_millis(64)).policy();
        assert_eq!(
            (c.next_sleep(), c.next_sleep()),
            (Duration::from_millis(64), Duration::from_millis(64))
        );
        assert!(BackOff::constant(Duration::ZERO).validate().is_err());
        assert!(BackOff::exponential().with_multiplier(0).validate().is_err());
        assert!(BackOff::exponential()
            .with_initial(Duration::from_secs(1))
            .validate()
            .is_err());
        assert!(BackOff::constant(Duration::MAX).validate().is_err());
        BackOff::exponential().validate().unwrap();
    }
}
