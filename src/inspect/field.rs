//! Lock hash fields: the owner field shapes Redisson and this crate write, hold counts, and
//! what makes a hash not a lock.

use crate::error::Error;

/// The largest hold count (`HINCRBY` works on signed 64-bit integers).
const COUNT_MAX: &str = "9223372036854775807";

/// The largest owner id (`u64`).
const OWNER_MAX: &str = "18446744073709551615";

/// A lock hash field split into its parts.
///
/// ```
/// use redisson_lock::inspect::{parse_field, Role};
/// let f = parse_field("6f1c2a9e-3b7d-4c11-9a0e-5d2f8b7c4e10:57:write").unwrap();
/// assert_eq!(f.client_id, "6f1c2a9e-3b7d-4c11-9a0e-5d2f8b7c4e10");
/// assert_eq!(f.owner_id, 57);
/// assert!(f.write);
/// // Redisson's transactional lock field `<client id>:<thread id>:<transaction id>`
/// let t = parse_field("6f1c2a9e-3b7d-4c11-9a0e-5d2f8b7c4e10:7:5e2d0c3b9a8f47e1").unwrap();
/// assert_eq!((t.owner_id, t.write), (7, false));
/// assert_eq!(t.transaction_id.as_deref(), Some("5e2d0c3b9a8f47e1"));
/// assert!(parse_field("mode").is_none());
/// assert!(parse_field("user:42").is_none()); // the client id must be a UUID
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Field {
    /// The client id: a UUID (Redisson's `RedissonClient.getId()`, or [`Client::id`](crate::Client::id)).
    pub client_id: String,
    /// The owner id: the Java thread id, or the [`OwnerId`](crate::OwnerId) of a Rust holder.
    pub owner_id: u64,
    /// Whether this is a read-write lock's writer field (suffix `:write`).
    pub write: bool,
    /// The transaction id of a Redisson transactional lock's field
    /// `<client id>:<owner id>:<transaction id>` (`RTransaction`).
    pub transaction_id: Option<String>,
}

/// Splits a lock hash field `<uuid>:<owner id>`, `<uuid>:<owner id>:write` or
/// `<uuid>:<owner id>:<transaction id>`; `None` when it does not have one of these shapes.
///
/// This is stricter than what [`inspect`](super::inspect) accepts as a holder (any client id without `:`).
/// See [`Field`] for an example.
pub fn parse_field(field: &str) -> Option<Field> {
    owner_field(field)
}

/// Splits an owner field `<client id>:<owner id>[:<suffix>]`: the client id is a UUID (Redisson's
/// and ours), the owner id a decimal `u64`, the suffix (`write`, or a transaction id) non-empty
/// text without `:`. The force-unlock scripts (`lua/common/lock_shape.lua`) accept the same names.
pub(super) fn owner_field(field: &str) -> Option<Field> {
    let (client, rest) = field.split_once(':')?;
    let (owner, suffix) = match rest.split_once(':') {
        Some((owner, suffix)) => (owner, Some(suffix)),
        None => (rest, None),
    };
    if !is_uuid(client) || !is_decimal(owner) || !at_most(owner, OWNER_MAX) {
        return None;
    }
    if suffix.is_some_and(|s| s.is_empty() || s.contains(':')) {
        return None;
    }
    Some(Field {
        client_id: client.to_owned(),
        owner_id: owner.parse().ok()?,
        write: suffix == Some("write"),
        transaction_id: suffix.filter(|s| *s != "write").map(str::to_owned),
    })
}

fn is_decimal(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

/// `digits` (decimal, no sign) is at most `max` (same notation), compared as text like the scripts do.
fn at_most(digits: &str, max: &str) -> bool {
    digits.len() < max.len() || (digits.len() == max.len() && digits <= max)
}

/// A hold count as `HINCRBY` writes it: a positive integer, no sign, no leading zero, at most
/// 2^63-1. Anything else (`abc`, `0`, `-1`, `1.5`, `+1`, `01`) means the hash is not a lock.
pub(super) fn hold_count(value: &str) -> Option<u64> {
    let canonical = is_decimal(value) && !value.starts_with('0') && at_most(value, COUNT_MAX);
    canonical.then(|| value.parse().ok()).flatten()
}

/// At most 60 characters of `s`, escaped, for quoting Redis data in an error message.
pub(super) fn shown(s: &str) -> String {
    let mut out: String = s.chars().take(60).flat_map(char::escape_debug).collect();
    if s.chars().nth(60).is_some() {
        out.push_str("...");
    }
    out
}

/// `None` when `field` = `value` fits a lock hash (see the module docs), else what is wrong.
pub(super) fn field_problem(field: &str, value: &str) -> Option<String> {
    if field == "mode" {
        return (value != "read" && value != "write")
            .then(|| format!("field `mode` is `{}`, not `read` or `write`", shown(value)));
    }
    if owner_field(field).is_none() {
        return Some(format!(
            "field `{}` is neither `mode` nor an owner `<client uuid>:<owner id>[:<suffix>]`",
            shown(field)
        ));
    }
    if hold_count(value).is_none() {
        return Some(format!(
            "field `{}` has count `{}`, not a positive integer",
            shown(field),
            shown(value)
        ));
    }
    None
}

/// The error for a hash under `key` that is not a lock.
pub(super) fn not_a_lock(key: &str, problem: &str) -> Error {
    Error::NotALock {
        key: key.to_owned(),
        why: format!("a hash whose {problem}"),
    }
}

fn is_uuid(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 36
        && b.iter().enumerate().all(|(i, c)| match i {
            8 | 13 | 18 | 23 => *c == b'-',
            _ => c.is_ascii_hexdigit(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    const ID: &str = "6f1c2a9e-3b7d-4c11-9a0e-5d2f8b7c4e10";

    #[test]
    fn every_field_shape_redisson_writes_is_an_owner() {
        let plain = parse_field(&format!("{ID}:57")).unwrap();
        assert_eq!(
            (plain.owner_id, plain.write, plain.transaction_id),
            (57, false, None)
        );
        let writer = parse_field(&format!("{ID}:57:write")).unwrap();
        assert_eq!(
            (writer.owner_id, writer.write, writer.transaction_id),
            (57, true, None)
        );
        let tx = parse_field(&format!("{ID}:7:5e2d0c3b9a8f47e1b6c4d2a0f9e8b7c6")).unwrap();
        assert_eq!(tx.client_id, ID);
        assert_eq!((tx.owner_id, tx.write), (7, false));
        assert_eq!(
            tx.transaction_id.as_deref(),
            Some("5e2d0c3b9a8f47e1b6c4d2a0f9e8b7c6")
        );
        assert_eq!(
            parse_field(&format!("{ID}:18446744073709551615"))
                .unwrap()
                .owner_id,
            u64::MAX
        );
        for f in [
            "6f1c2a9e-3b7d-4c11-9a0e-5d2f8b7c4e10:57",
            "6f1c2a9e-3b7d-4c11-9a0e-5d2f8b7c4e10:1:write",
            "6f1c2a9e-3b7d-4c11-9a0e-5d2f8b7c4e10:1:tx9",
        ] {
            assert_eq!(field_problem(f, "1"), None, "{f}");
        }
        // an application hash with `name:number` fields is not a lock
        assert!(field_problem("sku:1001", "2").is_some());
    }

    #[test]
    fn names_that_are_not_owner_fields() {
        for f in [
            "color",
            ":1",
            "a:",
            "a:b",
            "a:1:",
            "a:1:b:c",
            "a:-1",
            "a:18446744073709551616",
            "a:1.5",
        ] {
            let p = field_problem(f, "1").unwrap_or_else(|| panic!("`{f}` is not an owner field"));
            assert!(p.contains(&format!("`{f}`")) && p.contains("neither"), "{p}");
        }
        // the public parser wants a UUID client id
        assert!(parse_field("node-a:1").is_none());
        assert!(parse_field(&format!("{ID}:1:a:b")).is_none());
    }

    #[test]
    fn counts_must_be_positive_integers() {
        let c1 = format!("{ID}:1");
        for v in ["1", "2", "9223372036854775807"] {
            assert_eq!(field_problem(&c1, v), None, "{v}");
        }
        for v in [
            "abc",
            "",
            "0",
            "-1",
            "+1",
            "01",
            "1.5",
            " 1",
            "1e3",
            "9223372036854775808",
        ] {
            let p = field_problem(&c1, v).unwrap_or_else(|| panic!("`{v}` is not a count"));
            assert_eq!(p, format!("field `{c1}` has count `{v}`, not a positive integer"));
        }
    }

    #[test]
    fn mode_is_read_or_write() {
        assert_eq!(field_problem("mode", "read"), None);
        assert_eq!(field_problem("mode", "write"), None);
        assert_eq!(
            field_problem("mode", "1").as_deref(),
            Some("field `mode` is `1`, not `read` or `write`")
        );
    }

    #[test]
    fn the_error_names_key_field_and_value() {
        let e = not_a_lock("jobs", &field_problem(&format!("{ID}:1"), "abc").unwrap());
        assert!(matches!(&e, Error::NotALock { key, why } if key == "jobs"
            && why == &format!("a hash whose field `{ID}:1` has count `abc`, not a positive integer")));
        // long or binary data is cut and escaped (one line)
        let long = format!("{}\r\n", "x".repeat(100));
        let p = field_problem(&long, "1").unwrap();
        assert!(
            p.contains(&format!("`{}...`", "x".repeat(60))) && !p.contains('\n'),
            "{p}"
        );
        assert_eq!(shown("a\nb"), "a\\nb");
    }
}
