//! Redisson's key and channel names (`docs/protocol.md`, "Names"), as pure functions.

use std::sync::Arc;

use crate::error::{Error, Result};

/// Redisson's prefix rule: `P:N` when `N` contains `{`, otherwise `P:{N}`.
pub(crate) fn prefix_name(prefix: &str, name: &str) -> String {
    let mut s = String::with_capacity(prefix.len() + name.len() + 3);
    push_prefix_name(&mut s, prefix, name);
    s
}

/// [`prefix_name`] appended to `out`.
pub(crate) fn push_prefix_name(out: &mut String, prefix: &str, name: &str) {
    out.push_str(prefix);
    out.push(':');
    if name.contains('{') {
        out.push_str(name);
    } else {
        out.push('{');
        out.push_str(name);
        out.push('}');
    }
}

/// Redisson's suffix rule: `N:S` when `N` contains `{`, otherwise `{N}:S`.
pub(crate) fn suffix_name(name: &str, suffix: &str) -> String {
    if name.contains('{') {
        format!("{name}:{suffix}")
    } else {
        format!("{{{name}}}:{suffix}")
    }
}

/// The RLock unlock channel `redisson_lock__channel:{N}`.
pub(crate) fn lock_channel(name: &str) -> String {
    prefix_name("redisson_lock__channel", name)
}

/// [`lock_channel`] appended to `out`.
pub(crate) fn push_lock_channel(out: &mut String, name: &str) {
    push_prefix_name(out, "redisson_lock__channel", name)
}

/// The read-write lock channel `redisson_rwlock:{N}`.
pub(crate) fn rwlock_channel(name: &str) -> String {
    prefix_name("redisson_rwlock", name)
}

/// [`rwlock_channel`] appended to `out`.
pub(crate) fn push_rwlock_channel(out: &mut String, name: &str) {
    push_prefix_name(out, "redisson_rwlock", name)
}

/// A reader's timeout-key prefix `{N}:<field>:rwlock_timeout` (suffix rule).
pub(crate) fn rw_timeout_prefix(name: &str, field: &str) -> String {
    suffix_name(name, &format!("{field}:rwlock_timeout"))
}

/// The prefix scripts put before `:<field>:rwlock_timeout:<k>`: `{N}`, or `N` when `N` has `{`.
pub(crate) fn rw_key_prefix(name: &str) -> String {
    if name.contains('{') {
        name.to_owned()
    } else {
        format!("{{{name}}}")
    }
}

/// The fair lock's wait queue `redisson_lock_queue:{N}` (a list of owner fields).
pub(crate) fn fair_queue(name: &str) -> String {
    prefix_name("redisson_lock_queue", name)
}

/// The fair lock's waiter deadlines `redisson_lock_timeout:{N}` (a sorted set, epoch ms).
pub(crate) fn fair_deadlines(name: &str) -> String {
    prefix_name("redisson_lock_timeout", name)
}

/// The fenced lock's token counter `redisson_lock_token:{N}`.
pub(crate) fn token_key(name: &str) -> String {
    prefix_name("redisson_lock_token", name)
}

/// The unlock latch `redisson_unlock_latch:{N}:<request id>`.
pub(crate) fn latch(name: &str, request_id: &str) -> String {
    let mut s = latch_prefix(name, request_id.len());
    s.push_str(request_id);
    s
}

/// A latch key with a fresh request id (32 hex digits), built in one allocation: this runs twice
/// per lock + unlock. The id is this process's random 64-bit prefix and a 64-bit counter: unique
/// without asking the thread RNG for 16 bytes per request.
pub(crate) fn fresh_latch(name: &str) -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::LazyLock;
    const HEX: &[u8; 16] = b"0123456789abcdef";
    static PROCESS: LazyLock<u64> = LazyLock::new(|| uuid::Uuid::new_v4().as_u64_pair().0);
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let mut s = latch_prefix(name, 32);
    for word in [*PROCESS, n] {
        for shift in (0..16).rev() {
            s.push(HEX[((word >> (shift * 4)) & 15) as usize] as char);
        }
    }
    s
}

/// `redisson_unlock_latch:{name}:` (or without braces when the name has a hash tag), with room
/// for `extra` more bytes.
fn latch_prefix(name: &str, extra: usize) -> String {
    const PREFIX: &str = "redisson_unlock_latch";
    let mut s = String::with_capacity(PREFIX.len() + name.len() + 4 + extra);
    push_prefix_name(&mut s, PREFIX, name);
    s.push(':');
    s
}

/// Maps user-facing lock names to Redis keys (Redisson's `NameMapper`).
///
/// The default is the identity: the lock's key is exactly the name, as in Redisson.
/// A Java service must use the same mapping to share locks with us.
///
/// # Examples
///
/// ```
/// use redisson_lock::NameMapper;
/// let m = NameMapper::prefix("app1:");
/// assert_eq!(m.map("order:42"), "app1:order:42");
/// assert_eq!(NameMapper::identity().map("order:42"), "order:42");
/// ```
#[derive(Clone)]
pub struct NameMapper(Arc<dyn Fn(&str) -> String + Send + Sync>);

impl NameMapper {
    /// The identity mapping (Redisson's default).
    pub fn identity() -> Self {
        NameMapper(Arc::new(|n: &str| n.to_owned()))
    }

    /// Prepends `prefix` to every name.
    pub fn prefix(prefix: impl Into<String>) -> Self {
        let p: String = prefix.into();
        NameMapper(Arc::new(move |n: &str| format!("{p}{n}")))
    }

    /// A custom mapping.
    pub fn custom(f: impl Fn(&str) -> String + Send + Sync + 'static) -> Self {
        NameMapper(Arc::new(f))
    }

    /// Applies the mapping.
    pub fn map(&self, name: &str) -> String {
        (self.0)(name)
    }
}

impl Default for NameMapper {
    fn default() -> Self {
        Self::identity()
    }
}

impl std::fmt::Debug for NameMapper {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("NameMapper(..)")
    }
}

/// Checks a user-supplied name and maps it to the lock's Redis key.
pub(crate) fn lock_key(mapper: &NameMapper, name: &str) -> Result<String> {
    if name.is_empty() {
        return Err(Error::InvalidArgument("lock name must not be empty".into()));
    }
    let key = mapper.map(name);
    if key.is_empty() {
        return Err(Error::InvalidArgument(format!(
            "the name mapper turned `{name}` into an empty key"
        )));
    }
    Ok(key)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_redisson_rules() {
        assert_eq!(lock_channel("order:42"), "redisson_lock__channel:{order:42}");
        assert_eq!(lock_channel("{t}:a"), "redisson_lock__channel:{t}:a");
        assert_eq!(rwlock_channel("x"), "redisson_rwlock:{x}");
        let mut s = String::from("keep:");
        push_rwlock_channel(&mut s, "{t}y");
        assert_eq!(s, "keep:redisson_rwlock:{t}y");
        assert_eq!(latch("x", "ab"), "redisson_unlock_latch:{x}:ab");
        let (a, b) = (fresh_latch("x"), fresh_latch("x"));
        let id = a.strip_prefix("redisson_unlock_latch:{x}:").expect("prefix");
        assert_eq!(id.len(), 32);
        assert!(
            id.bytes()
                .all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(&c)),
            "{a}"
        );
        assert_ne!(a, b, "every request gets its own latch");
        assert!(fresh_latch("{t}x").starts_with("redisson_unlock_latch:{t}x:"));
        assert_eq!(token_key("x"), "redisson_lock_token:{x}");
        assert_eq!(fair_queue("x"), "redisson_lock_queue:{x}");
        assert_eq!(fair_deadlines("{t}x"), "redisson_lock_timeout:{t}x");
        assert_eq!(suffix_name("x", "f:rwlock_timeout"), "{x}:f:rwlock_timeout");
        assert_eq!(suffix_name("a{b", "s"), "a{b:s");
        // the `contains("{")` test, not a valid-hash-tag test
        assert_eq!(prefix_name("p", "a{}b"), "p:a{}b");
        assert_eq!(rw_timeout_prefix("n", "id:1"), "{n}:id:1:rwlock_timeout");
        assert_eq!(rw_timeout_prefix("{t}:n", "id:1"), "{t}:n:id:1:rwlock_timeout");
        assert_eq!(rw_key_prefix("n"), "{n}");
        assert_eq!(rw_key_prefix("{t}:n"), "{t}:n");
    }

    #[test]
    fn empty_names_are_rejected() {
        assert!(matches!(
            lock_key(&NameMapper::identity(), ""),
            Err(Error::InvalidArgument(_))
        ));
        let m = NameMapper::custom(|_| String::new());
        assert!(matches!(lock_key(&m, "a"), Err(Error::InvalidArgument(_))));
    }
}
