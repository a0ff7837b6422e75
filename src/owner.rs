//! Owner identity: the `<client id>:<owner id>` hash field (protocol §1.2).

use std::sync::atomic::{AtomicU64, Ordering};

/// Owner ids for OS threads start here, far above tokio task ids, so the two never collide
/// within one client (both still fit a Java `long`).
const THREAD_OWNER_BASE: u64 = 1 << 40;

static NEXT_THREAD_OWNER: AtomicU64 = AtomicU64::new(1);

thread_local! {
    static THREAD_OWNER: u64 = THREAD_OWNER_BASE + NEXT_THREAD_OWNER.fetch_add(1, Ordering::Relaxed);
}

/// Who a lock handle acts for: the numeric part of the hash field `<client id>:<owner id>`.
///
/// Redisson uses the Java thread id. In async Rust a thread means little (a task moves between
/// threads), so by default the owner is:
/// * inside a tokio task: the task's id (nested acquisitions in one task re-enter, like nested
///   acquisitions in one Java thread);
/// * elsewhere (blocking code, `block_on`, the blocking facade): an id fixed per OS thread.
///
/// Pin an id with [`RLock::with_owner`](crate::RLock::with_owner) when several tasks must act as
/// one owner, when one task must act as several, or to mirror a Java thread id. Guards remember
/// their owner, so a guard can be released from any task whatever the default.
///
/// # Examples
///
/// ```
/// use redisson_lock::OwnerId;
/// let thread_owner = std::thread::spawn(OwnerId::current).join().unwrap();
/// assert_ne!(thread_owner, OwnerId::current());
/// assert_eq!(OwnerId::from(57).get(), 57);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct OwnerId(u64);

impl OwnerId {
    /// The default owner of the calling code: the current tokio task, else the current thread.
    pub fn current() -> OwnerId {
        if let Some(task) = tokio::task::try_id() {
            // tokio's task::Id displays as its (process-wide, non-zero) counter value; it has no
            // public integer accessor, so read the digits back (on the stack, no allocation)
            if let Some(n) = display_u64(&task) {
                return OwnerId(n);
            }
        }
        OwnerId::current_thread()
    }

    /// The owner id of the current OS thread, even inside a tokio task.
    pub fn current_thread() -> OwnerId {
        OwnerId(THREAD_OWNER.with(|id| *id))
    }

    /// The numeric id, as written in the hash field.
    pub fn get(self) -> u64 {
        self.0
    }
}

impl From<u64> for OwnerId {
    fn from(id: u64) -> Self {
        OwnerId(id)
    }
}

impl std::fmt::Display for OwnerId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

/// Parses the decimal `Display` of `v` without allocating.
fn display_u64(v: &impl std::fmt::Display) -> Option<u64> {
    struct Digits {
        n: u64,
        ok: bool,
        any: bool,
    }
    impl std::fmt::Write for Digits {
        fn write_str(&mut self, s: &str) -> std::fmt::Result {
            for b in s.bytes() {
                let d = b.wrapping_sub(b'0');
                match (
                    d < 10,
                    self.n.checked_mul(10).and_then(|n| n.checked_add(u64::from(d))),
                ) {
                    (true, Some(n)) => {
                        self.n = n;
                        self.any = true;
                    }
                    _ => self.ok = false,
                }
            }
            Ok(())
        }
    }
    let mut d = Digits {
        n: 0,
        ok: true,
        any: false,
    };
    std::fmt::write(&mut d, format_args!("{v}")).ok()?;
    (d.ok && d.any).then_some(d.n)
}

/// How a lock handle picks its owner.
#[derive(Clone, Copy, Debug)]
pub(crate) enum OwnerSel {
    Current,
    Pinned(OwnerId),
}

impl OwnerSel {
    pub(crate) fn resolve(self) -> OwnerId {
        match self {
            OwnerSel::Current => OwnerId::current(),
            OwnerSel::Pinned(id) => id,
        }
    }
}

/// The hash field of an owner.
pub(crate) fn field(client_id: &str, owner: OwnerId) -> String {
    format!("{client_id}:{}", owner.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thread_owner_is_stable_per_thread() {
        assert_eq!(OwnerId::current_thread(), OwnerId::current_thread());
        let other = std::thread::spawn(OwnerId::current_thread).join().unwrap();
        assert_ne!(other, OwnerId::current_thread());
        assert!(other.get() > THREAD_OWNER_BASE);
    }

    #[tokio::test]
    async fn task_owner_differs_between_tasks() {
        let a = tokio::spawn(async { OwnerId::current() }).await.unwrap();
        let b = tokio::spawn(async { OwnerId::current() }).await.unwrap();
        assert_ne!(a, b);
        assert!(a.get() < THREAD_OWNER_BASE);
        let inner = tokio::spawn(async { (OwnerId::current(), OwnerId::current()) })
            .await
            .unwrap();
        assert_eq!(inner.0, inner.1);
    }

    #[test]
    fn display_digits() {
        assert_eq!(display_u64(&12345u64), Some(12345));
        assert_eq!(display_u64(&u64::MAX), Some(u64::MAX));
        assert_eq!(display_u64(&"12a"), None);
        assert_eq!(display_u64(&""), None);
        assert_eq!(display_u64(&"99999999999999999999999"), None);
    }

    #[test]
    fn field_format() {
        assert_eq!(field("abc", OwnerId(7)), "abc:7");
    }
}
