//! A grouped multi-lock's hash (Redisson's `getMultiLock(group, values)`, 3.38+): per value id
//! `v` held by owner `o`, the fields `v` = `o`, `v:o:expire_time` = the hold's deadline (epoch
//! ms, the writer's clock) and `v:o:lock_count` = the owner's holds of `v`.

use super::field::{hold_count, owner_field, shown};
use super::{Holder, Role};

/// The suffix of a held value's deadline field.
const EXPIRE: &str = ":expire_time";
/// The suffix of a held value's hold-count field.
const COUNT: &str = ":lock_count";

/// One value of a grouped multi-lock's hash and its holder ([`LockInfo::values`](super::LockInfo::values)).
///
/// A value is held while its deadline is not past by the reader's clock (the rule of Redisson's
/// scripts and this crate's): [`is_held_at`](GroupValue::is_held_at) with
/// [`LockInfo::redis_time_ms`](super::LockInfo::redis_time_ms).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct GroupValue {
    /// The value id: the value as the Java codec encodes it, hashed like a map key (22 base64
    /// characters).
    pub value_id: String,
    /// The holder's owner field `<client id>:<owner id>`.
    pub holder: String,
    /// The holder's client id.
    pub client_id: String,
    /// The holder's owner id (Java thread id or Rust [`OwnerId`](crate::OwnerId)).
    pub owner_id: u64,
    /// How many times the holder holds the value (`v:o:lock_count`; 0 when the field is absent).
    pub hold_count: u64,
    /// The hold's deadline (`v:o:expire_time`, epoch ms by the writer's clock; `None` when absent).
    pub deadline_ms: Option<i64>,
}

impl GroupValue {
    /// Whether the value is held at `now_ms` (epoch ms): its holder has a count and a deadline
    /// not before `now_ms`.
    ///
    /// ```no_run
    /// # async fn demo(mut conn: redisson_lock::Connection) -> redisson_lock::Result<()> {
    /// let info = redisson_lock::inspect::inspect(&mut conn, "orders-group").await?;
    /// for v in info.values.iter().filter(|v| v.is_held_at(info.redis_time_ms)) {
    ///     println!("{} held by {} x{}", v.value_id, v.holder, v.hold_count);
    /// }
    /// # Ok(()) }
    /// ```
    pub fn is_held_at(&self, now_ms: i64) -> bool {
        self.hold_count > 0 && self.deadline_ms.is_some_and(|d| d >= now_ms)
    }
}

/// What a grouped lock's field is: a value id naming its holder, or one of a holder's deadline
/// and count of a value (`<value id>:<owner>:expire_time|lock_count`).
enum Part<'a> {
    Holder(&'a str),
    Deadline,
    Count,
}

/// A value id: non-empty, without `:` (Redisson's ids are base64).
fn is_value_id(s: &str) -> bool {
    !s.is_empty() && !s.contains(':')
}

/// An owner `<client uuid>:<owner id>` without a suffix.
fn is_owner(s: &str) -> bool {
    owner_field(s).is_some_and(|f| !f.write && f.transaction_id.is_none())
}

fn part(field: &str) -> Option<Part<'_>> {
    if is_value_id(field) {
        return Some(Part::Holder(field));
    }
    let (v, rest) = field.split_once(':')?;
    if !is_value_id(v) {
        return None;
    }
    if let Some(owner) = rest.strip_suffix(EXPIRE) {
        return is_owner(owner).then_some(Part::Deadline);
    }
    let owner = rest.strip_suffix(COUNT)?;
    is_owner(owner).then_some(Part::Count)
}

/// A decimal integer as Lua writes a number of epoch ms (an optional `-`, no `+`).
fn is_integer(s: &str) -> bool {
    !s.starts_with('+') && s.parse::<i64>().is_ok()
}

/// `None` when `field` = `value` fits a grouped lock's hash, else what is wrong.
pub(super) fn group_field_problem(field: &str, value: &str) -> Option<String> {
    match part(field) {
        None => Some(format!(
            "field `{}` is neither a value id nor `<value id>:<owner>:expire_time|lock_count`",
            shown(field)
        )),
        Some(Part::Holder(_)) if !is_owner(value) => Some(format!(
            "value id `{}` names `{}`, not an owner `<client uuid>:<owner id>`",
            shown(field),
            shown(value)
        )),
        Some(Part::Deadline) if !is_integer(value) => Some(format!(
            "field `{}` is `{}`, not a deadline in epoch ms",
            shown(field),
            shown(value)
        )),
        Some(Part::Count) if hold_count(value).is_none() => Some(format!(
            "field `{}` has count `{}`, not a positive integer",
            shown(field),
            shown(value)
        )),
        Some(_) => None,
    }
}

/// A grouped lock's values and the holders among them at `now_ms`, or `None` when some field
/// does not fit (see [`group_field_problem`]) or no field names a holder.
///
/// The holders are the owners with a value held at `now_ms`, each once, its count the most holds
/// it has of one value; values sorted by id.
pub(super) fn read_group(fields: &[(String, String)], now_ms: i64) -> Option<(Vec<GroupValue>, Vec<Holder>)> {
    let find = |name: String| fields.iter().find(|(f, _)| *f == name).map(|(_, v)| v.as_str());
    let mut values = Vec::new();
    for (field, value) in fields {
        if group_field_problem(field, value).is_some() {
            return None;
        }
        let Some(Part::Holder(v)) = part(field) else {
            continue;
        };
        let parsed = owner_field(value)?;
        values.push(GroupValue {
            value_id: v.to_owned(),
            holder: value.clone(),
            client_id: parsed.client_id,
            owner_id: parsed.owner_id,
            hold_count: find(format!("{v}:{value}{COUNT}"))
                .and_then(hold_count)
                .unwrap_or(0),
            deadline_ms: find(format!("{v}:{value}{EXPIRE}")).and_then(|d| d.parse().ok()),
        });
    }
    if values.is_empty() {
        return None;
    }
    values.sort_by(|a, b| a.value_id.cmp(&b.value_id));
    let mut holders: Vec<Holder> = Vec::new();
    for v in values.iter().filter(|v| v.is_held_at(now_ms)) {
        match holders.iter_mut().find(|h| h.field == v.holder) {
            Some(h) => h.hold_count = h.hold_count.max(v.hold_count),
            None => holders.push(Holder {
                field: v.holder.clone(),
                client_id: v.client_id.clone(),
                owner_id: v.owner_id,
                hold_count: v.hold_count,
                role: Role::Exclusive,
                transaction_id: None,
                timeouts: Vec::new(),
            }),
        }
    }
    holders.sort_by(|a, b| a.field.cmp(&b.field));
    Some((values, holders))
}

#[cfg(test)]
mod tests {
    use super::*;

    const O1: &str = "6f1c2a9e-3b7d-4c11-9a0e-5d2f8b7c4e10:57";
    const O2: &str = "0b6b1c0e-9f7d-4d0c-8a3b-2e1f0d9c8b7a:3";

    fn f(field: &str, value: &str) -> (String, String) {
        (field.to_owned(), value.to_owned())
    }

    #[test]
    fn a_group_hash_reads_as_values_and_holders() {
        let fields = vec![
            f("bbb", O1),
            f(&format!("bbb:{O1}:expire_time"), "2000"),
            f(&format!("bbb:{O1}:lock_count"), "2"),
            f("aaa", O1),
            f(&format!("aaa:{O1}:expire_time"), "2000"),
            f(&format!("aaa:{O1}:lock_count"), "1"),
            f("ccc", O2),
            f(&format!("ccc:{O2}:expire_time"), "900"),
            f(&format!("ccc:{O2}:lock_count"), "1"),
        ];
        let (values, holders) = read_group(&fields, 1000).expect("a group hash");
        let ids: Vec<&str> = values.iter().map(|v| v.value_id.as_str()).collect();
        assert_eq!(ids, ["aaa", "bbb", "ccc"]);
        assert_eq!(values[1].hold_count, 2);
        assert_eq!(values[2].deadline_ms, Some(900));
        // O2's deadline is past at 1000: it holds nothing
        assert!(!values[2].is_held_at(1000));
        assert_eq!(holders.len(), 1);
        assert_eq!((holders[0].field.as_str(), holders[0].hold_count), (O1, 2));
        assert_eq!(holders[0].owner_id, 57);
        // at 800 both hold
        assert_eq!(read_group(&fields, 800).expect("a group hash").1.len(), 2);
    }

    #[test]
    fn a_lock_hash_or_garbage_is_not_a_group() {
        // an RLock hash: its field has `:` but no suffix of a group
        assert!(read_group(&[f(O1, "1")], 0).is_none());
        assert!(read_group(&[f("v", "user:1")], 0).is_none());
        assert!(read_group(&[f("v", O1), f(&format!("v:{O1}:lock_count"), "0")], 0).is_none());
        assert!(read_group(&[f("v", O1), f(&format!("v:{O1}:expire_time"), "soon")], 0).is_none());
        assert!(read_group(&[f("v", &format!("{O1}:write"))], 0).is_none());
        // only hold fields, no value names a holder
        assert!(read_group(&[f(&format!("v:{O1}:lock_count"), "1")], 0).is_none());
        assert!(group_field_problem("v", O1).is_none());
        assert!(group_field_problem(&format!("v:{O1}:expire_time"), "-5").is_none());
        assert!(group_field_problem("mode", "read").is_some());
    }
}
