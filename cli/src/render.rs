//! Output: human-readable tables, or one JSON object per line with `--json`.

use std::time::{Duration, UNIX_EPOCH};

use redisson_lock::inspect::{self, ChannelSubscribers, Holder, LatchInfo, Listeners, LockInfo, Role};
use redisson_lock::Ttl;
use serde_json::{json, Value};

use crate::now_ms;

/// What an error line reports (`kind` of the JSON error object).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ErrorKind {
    /// The command line was rejected before anything ran (a bad duration or number, an unknown
    /// flag, a missing argument...).
    InvalidArgument,
    /// The command ran and failed (unreachable Redis, a key that is not a lock, a lost hold...).
    Failed,
}

impl ErrorKind {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            ErrorKind::InvalidArgument => "invalid_argument",
            ErrorKind::Failed => "failed",
        }
    }
}

/// An error, as the one line the binary prints on stderr before exiting with code 1:
/// `redisson-lock: error: MESSAGE` or, with `--json`, one object of a fixed shape,
/// `{"error":{"kind":"invalid_argument"|"failed","message":MESSAGE,"argument":"--flag"|null}}`
/// (`argument`: the rejected argument, when the command line was rejected because of one).
pub(crate) fn error_line(json: bool, kind: ErrorKind, message: &str, argument: Option<&str>) -> String {
    if json {
        json!({"error": {"kind": kind.as_str(), "message": message, "argument": argument}}).to_string()
    } else if kind == ErrorKind::InvalidArgument {
        format!("redisson-lock: error: {message} (see --help)")
    } else {
        format!("redisson-lock: error: {message}")
    }
}

/// Where results go: stdout, as text or JSON lines; or, for an `Out` made by
/// [`holding`](Out::holding), kept until [`flush`](Out::flush).
pub(crate) struct Out {
    json: bool,
    held: Option<std::sync::Mutex<Vec<String>>>,
}

/// A TTL as Redis' PTTL would say it: ms, `-1` without expiry, `-2` when absent.
pub(crate) fn ttl_ms(ttl: Ttl) -> i64 {
    match ttl {
        Ttl::Expires(d) => d.as_millis() as i64,
        Ttl::NoExpiry => -1,
        _ => -2,
    }
}

pub(crate) fn fmt_ms(ms: u64) -> String {
    if ms >= 1000 {
        format!("{:.3}s", ms as f64 / 1000.0)
    } else {
        format!("{ms}ms")
    }
}

pub(crate) fn fmt_ttl(ttl: Ttl) -> String {
    match ttl {
        Ttl::Expires(d) => fmt_ms(d.as_millis() as u64),
        Ttl::NoExpiry => "no expiry".to_owned(),
        _ => "-".to_owned(),
    }
}

pub(crate) fn kind_str(info: &LockInfo) -> String {
    let kind = match (info.kind, &info.mode) {
        (Some(k), Some(m)) => format!("{k} (mode {m})"),
        (Some(k), None) => k.to_string(),
        (None, _) => "-".to_owned(),
    };
    with_entry(kind, &info.key)
}

/// `what`, followed by the map entry `key` belongs to when its name says it is one.
pub(crate) fn with_entry(what: String, key: &str) -> String {
    match entry_text(key) {
        Some(e) => format!("{what}, {e}"),
        None => what,
    }
}

/// The map entry a name is an object of, in words (`getLock(key) of map `orders``), when the
/// name says it is one (Redisson's `{map}:<hash>:<suffix>`).
pub(crate) fn entry_text(key: &str) -> Option<String> {
    inspect::map_entry_of(key).map(|e| format!("{}(key) of map `{}`", e.getter, e.map))
}

/// Adds `map_entry` (the map, the key's hash, the getter) to an object's JSON when its name is
/// a map entry's.
pub(crate) fn add_entry_json(v: &mut Value, key: &str) {
    if let Some(e) = inspect::map_entry_of(key) {
        v["map_entry"] = json!({"map": e.map, "key_hash": e.hash, "getter": e.getter});
    }
}

fn holder_json(h: &Holder) -> Value {
    let mut v = json!({
        "field": h.field,
        "client_id": h.client_id,
        "owner_id": h.owner_id,
        "count": h.hold_count,
        "role": h.role.as_str(),
    });
    if let Some(tx) = &h.transaction_id {
        v["transaction_id"] = json!(tx);
    }
    if h.role == Role::Read {
        v["timeouts"] = h
            .timeouts
            .iter()
            .map(|t| json!({"key": t.key, "ttl_ms": ttl_ms(t.ttl)}))
            .collect();
    }
    v
}

pub(crate) fn info_json(info: &LockInfo) -> Value {
    let mut v = json!({
        "name": info.key,
        "kind": info.kind.map(|k| k.as_str()),
        "locked": info.is_locked(),
        "ttl_ms": ttl_ms(info.ttl),
        "mode": info.mode,
        "holders": info.holders.iter().map(holder_json).collect::<Vec<_>>(),
        "queue": info.queue.iter().map(|w| json!({
            "field": w.field,
            "client_id": w.parsed.as_ref().map(|p| p.client_id.clone()),
            "owner_id": w.parsed.as_ref().map(|p| p.owner_id),
            "deadline_ms": w.deadline_ms,
            "deadline_from_redis_time_ms": w.deadline_from(info.redis_time_ms),
        })).collect::<Vec<_>>(),
        "token": info.token,
    });
    if !info.values.is_empty() {
        v["values"] = info
            .values
            .iter()
            .map(|g| {
                json!({
                    "value_id": g.value_id,
                    "holder": g.holder,
                    "client_id": g.client_id,
                    "owner_id": g.owner_id,
                    "count": g.hold_count,
                    "deadline_ms": g.deadline_ms,
                    "held": g.is_held_at(info.redis_time_ms),
                })
            })
            .collect();
    }
    add_entry_json(&mut v, &info.key);
    v
}

pub(crate) fn subscribers_json(c: &ChannelSubscribers) -> Value {
    json!({"channel": c.channel, "subscribers": c.classic, "sharded_subscribers": c.sharded})
}

/// A count (count-down latch or semaphore) as JSON: `kind` is `count`, never a lock kind.
pub(crate) fn latch_json(info: &LatchInfo) -> Value {
    let mut v = json!({
        "name": info.key,
        "kind": "count",
        "exists": info.exists,
        "count": info.count,
        "ttl_ms": ttl_ms(info.ttl),
        "channels": {
            "latch": subscribers_json(&info.latch_channel),
            "semaphore": subscribers_json(&info.semaphore_channel),
        },
        "listeners": info.listeners().as_str(),
    });
    add_entry_json(&mut v, &info.key);
    v
}

/// One line: name and count.
pub(crate) fn count_summary(info: &LatchInfo) -> String {
    if info.exists {
        format!(
            "{}: count {} (a count-down latch or a semaphore)",
            info.key, info.count
        )
    } else {
        format!("{}: count 0 (absent)", info.key)
    }
}

pub(crate) fn subscribers_str(c: &ChannelSubscribers) -> String {
    match c.sharded {
        Some(n) => format!("subscribers {} (+{n} sharded)", c.classic),
        None => format!("subscribers {}", c.classic),
    }
}

pub(crate) fn holder_short(h: &Holder) -> String {
    let mut s = format!("{} x{}", h.field, h.hold_count);
    if h.role != Role::Exclusive {
        s.push_str(&format!(" ({})", h.role));
    }
    s
}

/// One line: name, kind, holders, TTL.
pub(crate) fn summary_line(info: &LockInfo) -> String {
    if !info.is_locked() {
        return format!("{}: not locked", info.key);
    }
    let holders: Vec<String> = info.holders.iter().map(holder_short).collect();
    format!(
        "{}: {}, held by {}, TTL {}",
        info.key,
        kind_str(info),
        holders.join(", "),
        fmt_ttl(info.ttl)
    )
}

/// A waiter's deadline, relative to Redis' clock (fair-lock deadlines are written with each
/// waiter's own clock; they are compared with the clocks of the clients that purge the queue).
fn deadline_str(deadline_ms: i64, redis_now_ms: i64) -> String {
    let rel = deadline_ms - redis_now_ms;
    let rel = if rel >= 0 {
        format!("in {} by Redis' clock", fmt_ms(rel as u64))
    } else {
        format!(
            "{} ago by Redis' clock: stale (a dead waiter, or its client's clock is behind)",
            fmt_ms((-rel) as u64)
        )
    };
    format!("{} ({rel})", rfc3339(deadline_ms))
}

/// An epoch-ms instant as RFC 3339 text (UTC, milliseconds).
fn rfc3339(epoch_ms: i64) -> String {
    let at = UNIX_EPOCH + Duration::from_millis(epoch_ms.max(0) as u64);
    humantime::format_rfc3339_millis(at).to_string()
}

impl Out {
    pub(crate) fn new(json: bool) -> Out {
        Out { json, held: None }
    }

    /// An `Out` of the same format whose [`emit`](Out::emit)ted lines wait for
    /// [`flush`](Out::flush) (`watch` prints the messages that came first).
    pub(crate) fn holding(&self) -> Out {
        Out {
            json: self.json,
            held: Some(std::sync::Mutex::new(Vec::new())),
        }
    }

    /// Whether lines are waiting for [`flush`](Out::flush).
    pub(crate) fn has_held_lines(&self) -> bool {
        self.held
            .as_ref()
            .is_some_and(|h| !h.lock().unwrap_or_else(|e| e.into_inner()).is_empty())
    }

    /// Prints the lines kept so far.
    pub(crate) fn flush(&self) {
        if let Some(h) = &self.held {
            for line in std::mem::take(&mut *h.lock().unwrap_or_else(|e| e.into_inner())) {
                println!("{line}");
            }
        }
    }

    /// Whether `--json` was given.
    pub(crate) fn is_json(&self) -> bool {
        self.json
    }

    /// One JSON line (with `--json`) or one text line.
    pub(crate) fn emit(&self, value: Value, text: impl FnOnce() -> String) {
        let line = if self.json { value.to_string() } else { text() };
        match &self.held {
            Some(h) => h.lock().unwrap_or_else(|e| e.into_inner()).push(line),
            None => println!("{line}"),
        }
    }

    pub(crate) fn inspect(&self, info: &LockInfo) {
        if self.json {
            println!("{}", info_json(info));
            return;
        }
        println!("name     {}", info.key);
        if let Some(e) = entry_text(&info.key) {
            println!("entry    {e}");
        }
        if info.kind.is_none() {
            println!("state    not locked");
            return;
        }
        println!("kind     {}", kind_str(info));
        if info.is_locked() {
            println!("state    locked");
            println!("ttl      {}", fmt_ttl(info.ttl));
        } else {
            println!("state    not locked");
        }
        if !info.holders.is_empty() {
            println!("holders  {}", info.holders.len());
            for h in &info.holders {
                let tx = match &h.transaction_id {
                    Some(tx) => format!("  transaction {tx}"),
                    None => String::new(),
                };
                println!(
                    "  client {}  owner {}  count {}  {}{tx}",
                    h.client_id, h.owner_id, h.hold_count, h.role
                );
                for t in &h.timeouts {
                    println!("      {}  ttl {}", t.key, fmt_ttl(t.ttl));
                }
            }
        }
        if !info.queue.is_empty() {
            println!("queue    {} waiting", info.queue.len());
            for (i, w) in info.queue.iter().enumerate() {
                let who = match &w.parsed {
                    Some(p) => format!("client {}  owner {}", p.client_id, p.owner_id),
                    None => w.field.clone(),
                };
                let deadline = w
                    .deadline_ms
                    .map(|d| deadline_str(d, info.redis_time_ms))
                    .unwrap_or_else(|| "no deadline".to_owned());
                println!("  {}. {who}  deadline {deadline}", i + 1);
            }
            let skew = now_ms() as i64 - info.redis_time_ms;
            if skew.abs() > 1_000 {
                println!(
                    "clock    this machine's clock is {}{} from Redis' TIME: fair-lock deadlines need clients' clocks in sync",
                    if skew > 0 { "+" } else { "-" },
                    fmt_ms(skew.unsigned_abs())
                );
            }
        }
        if let Some(t) = info.token {
            println!("token    {t}");
        }
        if !info.values.is_empty() {
            println!("values   {}", info.values.len());
            for v in &info.values {
                let deadline = match v.deadline_ms {
                    Some(d) if v.is_held_at(info.redis_time_ms) => {
                        let left = fmt_ms((d - info.redis_time_ms).max(0) as u64);
                        format!("{} (in {left} by Redis' clock)", rfc3339(d))
                    }
                    Some(d) => format!("{} (passed by Redis' clock: holds nothing)", rfc3339(d)),
                    None => "no deadline (holds nothing)".to_owned(),
                };
                println!(
                    "  {}  client {}  owner {}  count {}  until {deadline}",
                    v.value_id, v.client_id, v.owner_id, v.hold_count
                );
            }
        }
    }

    pub(crate) fn inspect_latch(&self, info: &LatchInfo) {
        if self.json {
            println!("{}", latch_json(info));
            return;
        }
        println!("name     {}", info.key);
        if let Some(e) = entry_text(&info.key) {
            println!("entry    {e}");
        }
        println!("kind     {COUNT_KIND} (both keep a plain integer at the name)");
        if info.exists {
            println!("state    set");
        } else {
            println!("state    absent (a latch is deleted when it reaches zero)");
        }
        println!("count    {}", info.count);
        println!("ttl      {}", fmt_ttl(info.ttl));
        let width = info
            .latch_channel
            .channel
            .chars()
            .count()
            .max(info.semaphore_channel.channel.chars().count());
        for (what, c) in [
            ("latch    ", &info.latch_channel),
            ("semaphore", &info.semaphore_channel),
        ] {
            println!("channel  {:<width$}  {what}  {}", c.channel, subscribers_str(c));
        }
        let likely = match info.listeners() {
            Listeners::Latch => "a count-down latch: its channel has subscribers (waiters)",
            Listeners::Semaphore => {
                "a semaphore: its channel has subscribers (waiters); --semaphore shows it as one"
            }
            Listeners::Both => "unclear: both channels have subscribers",
            _ => "cannot tell: nobody listens on either channel (--latch or --semaphore say which)",
        };
        println!("likely   {likely}");
    }

    pub(crate) fn force_unlock_nothing(&self, info: &LockInfo) {
        self.emit(
            json!({"event": "force-unlock", "name": info.key, "removed": false, "ts_ms": now_ms()}),
            || format!("nothing to remove: {} is not locked", info.key),
        );
    }

    /// `channel`: where the unlock message went (`None`: a fair lock nobody waits for, so
    /// nothing was published).
    pub(crate) fn force_unlocked(&self, info: &LockInfo, removed: bool, channel: Option<&str>) {
        let holders: Vec<Value> = info.holders.iter().map(holder_json).collect();
        self.emit(
            json!({
                "event": "force-unlock",
                "name": info.key,
                "kind": info.kind.map(|k| k.as_str()),
                "removed": removed,
                "holders": holders,
                "ttl_ms": ttl_ms(info.ttl),
                "published": if removed { channel } else { None },
                "ts_ms": now_ms(),
            }),
            || {
                if removed {
                    let hs: Vec<String> = info.holders.iter().map(holder_short).collect();
                    let published = match channel {
                        Some(c) => format!("published unlock on {c}"),
                        None => "nobody queued: nothing published".to_owned(),
                    };
                    format!(
                        "removed {} ({}; holders: {}; TTL was {}); {published}",
                        info.key,
                        kind_str(info),
                        hs.join(", "),
                        fmt_ttl(info.ttl)
                    )
                } else {
                    format!("nothing removed: {} was released or changed meanwhile", info.key)
                }
            },
        );
    }
}

/// What the kind of a count is, as far as Redis tells.
pub(crate) const COUNT_KIND: &str = "count: a count-down latch or a semaphore";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_lines() {
        assert_eq!(
            error_line(false, ErrorKind::Failed, "cannot reach redis", None),
            "redisson-lock: error: cannot reach redis"
        );
        assert_eq!(
            error_line(false, ErrorKind::InvalidArgument, "bad", Some("--for")),
            "redisson-lock: error: bad (see --help)"
        );
        let v: Value = serde_json::from_str(&error_line(
            true,
            ErrorKind::InvalidArgument,
            "a \"b\"",
            Some("--for"),
        ))
        .unwrap();
        assert_eq!(
            v,
            json!({"error": {"kind": "invalid_argument", "message": "a \"b\"", "argument": "--for"}})
        );
        let v: Value = serde_json::from_str(&error_line(true, ErrorKind::Failed, "x", None)).unwrap();
        assert_eq!(
            v,
            json!({"error": {"kind": "failed", "message": "x", "argument": null}})
        );
    }
}
