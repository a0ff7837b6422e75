//! Semaphores as `inspect` and `watch` show them: Redisson's `RSemaphore` (available permits
//! only) and `RPermitExpirableSemaphore` (also every permit held under an id, with its lease).
//! Read from `redisson_lock::inspect::inspect_semaphore`; nothing here writes (a lease that has
//! ended is shown as such, never given back). `watch` follows one with [`SemaphoreWatch`].

use std::time::{Duration, UNIX_EPOCH};

use redisson_lock::inspect::{self, HeldPermit, SemaphoreInfo};
use redisson_lock::{Connection, Error, PermitId};
use serde_json::{json, Value};

use crate::follow::{clock, semaphore_meaning, Follow};
use crate::render::{fmt_ms, fmt_ttl, subscribers_json, subscribers_str, ttl_ms, Out};
use crate::{now_ms, Failure};

/// A semaphore and the kind it is shown as.
#[derive(Clone, Debug)]
pub(crate) struct Sem {
    pub(crate) info: SemaphoreInfo,
    /// Shown as a permit-expirable semaphore: asked for (`--expirable-semaphore`), or permits
    /// are held under ids (only that kind keeps them).
    pub(crate) expirable: bool,
}

impl Sem {
    pub(crate) fn new(info: SemaphoreInfo, expirable: bool) -> Sem {
        let expirable = expirable || info.is_expirable();
        Sem { info, expirable }
    }

    /// `kind` in JSON.
    pub(crate) fn kind(&self) -> &'static str {
        if self.expirable {
            "expirable-semaphore"
        } else {
            "semaphore"
        }
    }

    /// The kind in a few words, for the `watching` line.
    pub(crate) fn kind_short(&self) -> &'static str {
        if self.expirable {
            "permit-expirable semaphore"
        } else {
            "semaphore"
        }
    }

    /// The kind in words, with Redisson's name of it.
    pub(crate) fn kind_text(&self) -> &'static str {
        if self.expirable {
            "permit-expirable semaphore (RPermitExpirableSemaphore)"
        } else {
            "semaphore (RSemaphore)"
        }
    }
}

/// A failure of `inspect_semaphore` on `name`, said as one line.
pub(crate) fn semaphore_failure(name: &str, e: Error) -> Failure {
    match e {
        Error::WrongType { key } if key == name => Failure(format!(
            "key `{key}` is not a semaphore (it holds another type of value)"
        )),
        Error::WrongType { key } => Failure(format!(
            "key `{key}` (where semaphore `{name}` keeps its held permits) is not a sorted set \
             (it holds another type of value)"
        )),
        // "`NAME` holds `TEXT`, not a count", "... has the member ..., not a permit id"
        Error::Protocol(m) => Failure(m),
        other => other.into(),
    }
}

fn permit_json(p: &HeldPermit, now: i64) -> Value {
    json!({
        "id": p.id.to_string(),
        "lease_end_ms": p.lease_end_ms,
        "lease_remaining_ms": p.remaining_from(now),
        "ended": p.has_ended(now),
    })
}

/// A semaphore as JSON. `held`, `ended`, `capacity` and `leases_key` are `null` for an
/// `RSemaphore` (it records no holders); lease times are by Redis' clock (`redis_time_ms`).
pub(crate) fn semaphore_json(s: &Sem) -> Value {
    let i = &s.info;
    let mut v = json!({
        "name": i.key,
        "kind": s.kind(),
        "exists": i.exists,
        "available": i.available,
        "ttl_ms": ttl_ms(i.ttl),
        "held": s.expirable.then_some(i.held),
        "ended": s.expirable.then_some(i.ended),
        "capacity": s.expirable.then(|| i.capacity()),
        "leases_key": s.expirable.then_some(&i.leases_key),
        "leases_ttl_ms": s.expirable.then(|| ttl_ms(i.leases_ttl)),
        "permits": i.permits.iter().map(|p| permit_json(p, i.redis_time_ms)).collect::<Vec<_>>(),
        "permits_truncated": (i.permits.len() as u64) < i.held,
        "channel": subscribers_json(&i.channel),
        "redis_time_ms": i.redis_time_ms,
    });
    crate::render::add_entry_json(&mut v, &i.key);
    v
}

/// One line: name, available, held, capacity.
pub(crate) fn semaphore_summary(s: &Sem) -> String {
    let i = &s.info;
    let mut line = if i.exists {
        format!("{}: {} available", i.key, i.available)
    } else {
        format!("{}: absent (0 available)", i.key)
    };
    if s.expirable {
        line.push_str(&format!(", {} held", i.held));
        if i.ended > 0 {
            line.push_str(&format!(" ({} lease(s) ended, not reclaimed yet)", i.ended));
        }
        line.push_str(&format!(", capacity {}", i.capacity()));
    }
    line.push_str(&format!(" ({})", s.kind()));
    line
}

/// An epoch-ms time as RFC 3339 (UTC).
fn at(ms: i64) -> String {
    humantime::format_rfc3339_millis(UNIX_EPOCH + Duration::from_millis(ms.max(0) as u64)).to_string()
}

/// A held permit's lease, by Redis' clock `now`.
pub(crate) fn lease_str(p: &HeldPermit, now: i64) -> String {
    match (p.lease_end_ms, p.remaining_from(now)) {
        (Some(end), Some(left)) if p.has_ended(now) => format!(
            "lease ended {} ago ({}): not reclaimed yet, comes back at the next acquisition or count",
            fmt_ms(left.unsigned_abs()),
            at(end)
        ),
        (Some(end), Some(left)) if left >= 0 => {
            format!("lease ends in {} ({})", fmt_ms(left as u64), at(end))
        }
        // before the epoch: the scripts never reclaim it
        (Some(end), _) => format!("lease end {end} ms: never reclaimed (before 1970)"),
        _ => "no lease: held until released".to_owned(),
    }
}

/// `label` padded to the semaphore view's column.
fn row(label: &str, value: impl std::fmt::Display) {
    println!("{label:<10} {value}");
}

impl Out {
    pub(crate) fn inspect_semaphore(&self, s: &Sem) {
        if self.is_json() {
            println!("{}", semaphore_json(s));
            return;
        }
        let i = &s.info;
        row("name", &i.key);
        if let Some(e) = crate::render::entry_text(&i.key) {
            row("entry", e);
        }
        row("kind", s.kind_text());
        row(
            "state",
            match (i.exists, i.held > 0) {
                (true, _) => "set",
                (false, false) => "absent: no semaphore under this name (0 permits available)",
                (false, true) => "absent, but permits are held under ids (the count was deleted or expired)",
            },
        );
        row("available", i.available);
        row("ttl", fmt_ttl(i.ttl));
        if !s.expirable {
            row(
                "held",
                "not recorded (an RSemaphore does not know who took its permits; capacity unknown)",
            );
        } else {
            let now = i.redis_time_ms;
            let ended = match i.ended {
                0 => String::new(),
                n => format!(
                    ", {n} of them with an ended lease (not reclaimed yet: they come back at the \
                     next acquisition or count)"
                ),
            };
            row("held", format!("{} under ids{ended}", i.held));
            row("capacity", format!("{} (available + held)", i.capacity()));
            if i.held > 0 {
                row(
                    "permits",
                    format!(
                        "{}  ttl {}  (lease times by Redis' clock)",
                        i.leases_key,
                        fmt_ttl(i.leases_ttl)
                    ),
                );
                for (n, p) in i.permits.iter().enumerate() {
                    println!("  {}. {}  {}", n + 1, p.id, lease_str(p, now));
                }
                let unlisted = i.held.saturating_sub(i.permits.len() as u64);
                if unlisted > 0 {
                    println!(
                        "  ... and {unlisted} more (the first {} are listed)",
                        i.permits.len()
                    );
                }
                let skew = now_ms() as i64 - now;
                if skew.abs() > 1_000 && i.permits.iter().any(|p| p.lease_end_ms.is_some()) {
                    row(
                        "clock",
                        format!(
                            "this machine's clock is {}{} from Redis' TIME: leases end by the clients' clocks, keep them in sync",
                            if skew > 0 { "+" } else { "-" },
                            fmt_ms(skew.unsigned_abs())
                        ),
                    );
                }
            }
        }
        row(
            "channel",
            format!("{}  {}", i.channel.channel, subscribers_str(&i.channel)),
        );
    }
}

/// What a state line is printed for: the counts and every listed permit with its lease end and
/// whether it has ended.
type StateKey = (bool, bool, i64, u64, u64, Vec<(PermitId, Option<i64>, bool)>);

fn state_key(s: &Sem) -> StateKey {
    let i = &s.info;
    let permits = i
        .permits
        .iter()
        .map(|p| (p.id, p.lease_end_ms, p.has_ended(i.redis_time_ms)))
        .collect();
    (s.expirable, i.exists, i.available, i.held, i.ended, permits)
}

/// A semaphore followed by `watch`: its channel, the available permits, and each held permit
/// (acquired, released, lease updated, lease ended, reclaimed).
pub(crate) struct SemaphoreWatch {
    sem: Sem,
    channel: String,
}

impl SemaphoreWatch {
    pub(crate) fn new(sem: Sem) -> SemaphoreWatch {
        let channel = sem.info.channel.channel.clone();
        SemaphoreWatch { sem, channel }
    }

    /// One line per held permit that changed from `before` to now (when both list every held
    /// permit).
    fn print_permits(&self, out: &Out, before: &Sem) {
        let (was, is) = (&before.info, &self.sem.info);
        if (was.permits.len() as u64) < was.held || (is.permits.len() as u64) < is.held {
            return;
        }
        let now = is.redis_time_ms;
        for p in &is.permits {
            let change = match was.permits.iter().find(|q| q.id == p.id) {
                None => "acquired",
                Some(q) if q.lease_end_ms != p.lease_end_ms => "lease_updated",
                Some(q) if p.has_ended(now) && !q.has_ended(was.redis_time_ms) => "lease_ended",
                Some(_) => continue,
            };
            self.permit_line(out, change, p, now);
        }
        for q in &was.permits {
            if !is.permits.iter().any(|p| p.id == q.id) {
                let change = if q.has_ended(now) { "reclaimed" } else { "released" };
                self.permit_line(out, change, q, now);
            }
        }
    }

    fn permit_line(&self, out: &Out, change: &str, p: &HeldPermit, now: i64) {
        out.emit(
            json!({
                "event": "permit",
                "name": self.sem.info.key,
                "change": change,
                "id": p.id.to_string(),
                "lease_end_ms": p.lease_end_ms,
                "lease_remaining_ms": p.remaining_from(now),
                "ts_ms": now_ms(),
            }),
            || {
                let what = match change {
                    "acquired" => format!("acquired, {}", lease_str(p, now)),
                    "lease_updated" => format!("lease updated: {}", lease_str(p, now)),
                    "lease_ended" => {
                        "lease ended: not reclaimed yet, comes back at the next acquisition or count"
                            .to_owned()
                    }
                    "reclaimed" => "gone after its lease ended (reclaimed, or released late)".to_owned(),
                    _ => "released".to_owned(),
                };
                format!("{}  permit  {} {what}", clock(), p.id)
            },
        );
    }
}

impl Follow for SemaphoreWatch {
    fn kind(&self) -> Option<(&'static str, String)> {
        Some((self.sem.kind(), self.sem.kind_short().to_owned()))
    }

    fn channels(&self) -> Vec<String> {
        vec![self.channel.clone()]
    }

    fn meaning(&self, channel: &str, payload: &str) -> String {
        if channel == self.channel {
            semaphore_meaning(payload)
        } else {
            "message on an unexpected channel".to_owned()
        }
    }

    /// The state line. Subscriber counts are left out: this watch is a subscriber too.
    fn print_state(&self, out: &Out) {
        let mut v = semaphore_json(&self.sem);
        if let Some(o) = v.as_object_mut() {
            o.remove("channel");
        }
        v["event"] = json!("state");
        v["ts_ms"] = json!(now_ms());
        out.emit(v, || {
            format!("{}  state   {}", clock(), semaphore_summary(&self.sem))
        });
    }

    async fn sample(&mut self, conn: &mut Connection, out: &Out) -> Result<(), Error> {
        let info = inspect::inspect_semaphore(conn, &self.sem.info.key).await?;
        // once shown as permit-expirable, it stays so when its last permit is given back
        let now = Sem::new(info, self.sem.expirable);
        let changed = state_key(&now) != state_key(&self.sem);
        let before = std::mem::replace(&mut self.sem, now);
        if changed {
            self.print_state(out);
            self.print_permits(out, &before);
        }
        Ok(())
    }

    fn failure(&self, e: Error) -> Failure {
        semaphore_failure(&self.sem.info.key, e)
    }
}
