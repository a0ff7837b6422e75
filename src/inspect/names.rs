//! The names of the keys and channels beside a lock, and every kind's layout.

use crate::name;

/// The RLock / fair / fenced unlock channel of a lock key: `redisson_lock__channel:{N}`.
///
/// ```
/// use redisson_lock::inspect::lock_channel;
/// assert_eq!(lock_channel("order:42"), "redisson_lock__channel:{order:42}");
/// assert_eq!(lock_channel("{tenant}:a"), "redisson_lock__channel:{tenant}:a");
/// ```
pub fn lock_channel(key: &str) -> String {
    name::lock_channel(key)
}

/// The read-write lock channel of a lock key: `redisson_rwlock:{N}` (`0` = read unlock,
/// `1` = write unlock).
///
/// ```
/// assert_eq!(redisson_lock::inspect::rwlock_channel("doc"), "redisson_rwlock:{doc}");
/// ```
pub fn rwlock_channel(key: &str) -> String {
    name::rwlock_channel(key)
}

/// A fair-lock waiter's own channel: `redisson_lock__channel:{N}:<field>`.
///
/// ```
/// use redisson_lock::inspect::fair_waiter_channel;
/// assert_eq!(fair_waiter_channel("q", "c:1"), "redisson_lock__channel:{q}:c:1");
/// ```
pub fn fair_waiter_channel(key: &str, field: &str) -> String {
    format!("{}:{field}", name::lock_channel(key))
}

/// A fair lock's wait queue (list): `redisson_lock_queue:{N}`.
///
/// ```
/// assert_eq!(redisson_lock::inspect::fair_queue_key("q"), "redisson_lock_queue:{q}");
/// ```
pub fn fair_queue_key(key: &str) -> String {
    name::fair_queue(key)
}

/// A fair lock's waiter deadlines (sorted set): `redisson_lock_timeout:{N}`.
///
/// ```
/// assert_eq!(redisson_lock::inspect::fair_timeout_key("q"), "redisson_lock_timeout:{q}");
/// ```
pub fn fair_timeout_key(key: &str) -> String {
    name::fair_deadlines(key)
}

/// A fenced lock's token counter (string): `redisson_lock_token:{N}`.
///
/// ```
/// assert_eq!(redisson_lock::inspect::fence_token_key("f"), "redisson_lock_token:{f}");
/// ```
pub fn fence_token_key(key: &str) -> String {
    name::token_key(key)
}

/// The timeout key of a reader's `k`-th read hold: `{N}:<field>:rwlock_timeout:<k>`
/// (`N:<field>:rwlock_timeout:<k>` when `N` contains `{`).
///
/// ```
/// use redisson_lock::inspect::read_timeout_key;
/// assert_eq!(read_timeout_key("doc", "c:1", 2), "{doc}:c:1:rwlock_timeout:2");
/// assert_eq!(read_timeout_key("{t}doc", "c:1", 1), "{t}doc:c:1:rwlock_timeout:1");
/// ```
pub fn read_timeout_key(key: &str, field: &str, k: u64) -> String {
    format!("{}:{k}", name::rw_timeout_prefix(key, field))
}

/// The key-prefix part of a read hold's timeout keys: `{N}` (`N` when `N` contains `{`), what the
/// read scripts put before `:<field>:rwlock_timeout:<k>`.
///
/// ```
/// use redisson_lock::inspect::read_timeout_key_prefix;
/// assert_eq!(read_timeout_key_prefix("doc"), "{doc}");
/// assert_eq!(read_timeout_key_prefix("{t}doc"), "{t}doc");
/// ```
pub fn read_timeout_key_prefix(key: &str) -> String {
    name::rw_key_prefix(key)
}

pub use crate::layout::{ChannelSpec, KeySpec, Layout};

/// What every lock kind keeps in Redis and sends there, one [`Layout`] per kind (the same
/// values its requests are built from): for audits such as ACL rules, and for tools that must
/// know every key a lock may leave.
///
/// ```
/// let kinds: Vec<&str> = redisson_lock::inspect::layouts().iter().map(|l| l.kind()).collect();
/// assert!(kinds.contains(&"fair") && kinds.contains(&"read"));
/// ```
pub fn layouts() -> &'static [&'static Layout] {
    crate::kinds::LAYOUTS
}

/// What every synchronizer keeps in Redis and sends there, one [`Layout`] each (the count-down
/// latch, `RSemaphore`, `RPermitExpirableSemaphore`), as [`layouts`] for the locks. A
/// synchronizer's first key is its count (a string), not a lock hash.
///
/// ```
/// let pes = redisson_lock::inspect::synchronizer_layouts()
///     .iter()
///     .find(|l| l.redisson() == "getPermitExpirableSemaphore")
///     .unwrap();
/// let leases = pes.keys().iter().find(|k| k.role() == "leases").unwrap();
/// assert_eq!(leases.name("sem", ""), "{sem}:timeout");
/// ```
pub fn synchronizer_layouts() -> &'static [&'static Layout] {
    static ALL: [&Layout; 3] = [
        &crate::count_down_latch::LAYOUT,
        &crate::semaphore::SEMAPHORE_LAYOUT,
        &crate::semaphore::EXPIRABLE_LAYOUT,
    ];
    &ALL
}

/// What Redisson's grouped multi-lock (`getMultiLock(group, values)`) keeps in Redis and sends
/// there, as [`layouts`] for the locks opened by a name: its first key is the group's hash.
///
/// ```
/// let group = redisson_lock::inspect::group_layout();
/// assert_eq!(group.redisson(), "getMultiLock(group, values)");
/// assert!(group.commands().contains("hincrby"));
/// ```
#[cfg(feature = "group-lock")]
pub fn group_layout() -> &'static Layout {
    &crate::kinds::group::LAYOUT
}

/// The latch of one unlock or acquire request: `redisson_unlock_latch:{N}:<request id>`
/// (Redisson 3.24+'s unlock latch; our acquire attempts leave their record there too).
///
/// ```
/// use redisson_lock::inspect::latch_key;
/// assert_eq!(latch_key("order:42", "ab12"), "redisson_unlock_latch:{order:42}:ab12");
/// ```
pub fn latch_key(key: &str, request_id: &str) -> String {
    name::latch(key, request_id)
}

#[cfg(test)]
mod synchronizer_layout_tests {
    /// Every synchronizer layout declares exactly the commands its scripts send, and its names
    /// are the ones the synchronizer's requests use.
    #[test]
    fn synchronizer_layouts_declare_what_their_scripts_send() {
        for layout in super::synchronizer_layouts() {
            assert_eq!(
                layout.declared_commands(),
                layout.commands(),
                "{}: declared vs. sent",
                layout.kind()
            );
            assert_eq!(layout.keys()[0].name("n", ""), "n");
            assert_eq!(layout.keys()[0].redis_type(), Some("string"));
        }
        let [latch, sem, pes] = super::synchronizer_layouts() else {
            panic!("three synchronizers")
        };
        assert_eq!(
            latch.channels()[0].name("n", ""),
            crate::count_down_latch::channel("n")
        );
        assert_eq!(sem.channels()[0].name("n", ""), crate::semaphore::channel("n"));
        assert_eq!(pes.keys()[1].name("n", ""), crate::semaphore::leases("n"));
    }
}
