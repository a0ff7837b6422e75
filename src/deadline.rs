//! The one deadline rule of every wait, lease and window.

use std::time::{Duration, Instant};

/// `start + d`, saturating at a year from `start`: the one deadline rule of every wait, lease and
/// window (a caller's `Duration::MAX` means "no practical bound", never a panic).
pub(crate) fn after(start: Instant, d: Duration) -> Instant {
    start
        .checked_add(d)
        .unwrap_or(start + Duration::from_secs(86_400 * 365))
}
