//! `list`: the locks whose names match a pattern, one line each; with `--synchronizers` also
//! the counts (every integer string: a count-down latch, an `RSemaphore`, or an application's
//! integer) and the permit-expirable semaphores, in a second table. Only reads.

use redisson_lock::inspect::{LatchInfo, Listeners, LockInfo, SemaphoreInfo, Synchronizer};

use crate::cluster;
use crate::render::{fmt_ms, fmt_ttl, holder_short, info_json, kind_str, latch_json, with_entry, Out};
use crate::semaphore::{semaphore_json, Sem};
use crate::target::{Session, Target};
use crate::{Failure, Outcome};

/// `list [PATTERN] [--synchronizers]`.
pub(crate) async fn list(
    session: &Session,
    target: &Target,
    out: &Out,
    pattern: &str,
    synchronizers: bool,
) -> Result<Outcome, Failure> {
    let found = cluster::scan(session, target, pattern, synchronizers).await?;
    out.list(&found.locks);
    if synchronizers {
        out.list_synchronizers(&found.synchronizers);
    }
    Ok(Outcome::Done)
}

/// A count's kind, as far as Redis tells: whose channel has subscribers.
fn count_kind(info: &LatchInfo) -> &'static str {
    match info.listeners() {
        Listeners::Latch => "count: latch",
        Listeners::Semaphore => "count: semaphore",
        Listeners::Both => "count: latch or semaphore (both channels listened on)",
        _ => "count: latch or semaphore (nobody listening)",
    }
}

/// A permit-expirable semaphore in a few words: available and held permits, and when the
/// earliest lease ends (by Redis' clock).
fn expirable_state(i: &SemaphoreInfo) -> String {
    let mut s = format!("{} available, {} held", i.available, i.held);
    if i.ended > 0 {
        s.push_str(&format!(" ({} lease(s) ended, not reclaimed yet)", i.ended));
    }
    let now = i.redis_time_ms;
    // the held permits come earliest lease end first, those without a lease last
    if let Some(p) = i.permits.first() {
        match (p.lease_end_ms, p.remaining_from(now)) {
            (Some(_), Some(left)) if p.has_ended(now) => s.push_str(&format!(
                ", earliest lease end {} ago",
                fmt_ms(left.unsigned_abs())
            )),
            (Some(_), Some(left)) if left >= 0 => {
                s.push_str(&format!(", earliest lease end in {}", fmt_ms(left as u64)))
            }
            // before the epoch: the scripts never reclaim it
            (Some(end), _) => s.push_str(&format!(", earliest lease end {end} ms (before 1970)")),
            _ => s.push_str(", no lease"),
        }
    }
    s
}

/// Subscribers of a channel, classic and sharded together.
fn listening(what: &str, c: &redisson_lock::inspect::ChannelSubscribers) -> String {
    format!("{what} {}", c.total())
}

/// Rows of text with a header: every column but the last padded to its widest cell, two spaces
/// between columns.
fn table<const N: usize>(header: [&str; N], rows: Vec<[String; N]>) {
    let header = header.map(str::to_owned);
    let mut w = [0usize; N];
    for r in std::iter::once(&header).chain(rows.iter()) {
        for (c, cell) in r.iter().enumerate() {
            w[c] = w[c].max(cell.chars().count());
        }
    }
    for r in std::iter::once(&header).chain(rows.iter()) {
        let mut line = String::new();
        for (c, cell) in r.iter().enumerate() {
            if c + 1 == N {
                line.push_str(cell);
            } else {
                line.push_str(&format!("{cell:<width$}  ", width = w[c]));
            }
        }
        println!("{line}");
    }
}

impl Out {
    /// One line per lock (one JSON object each, as `inspect` prints it).
    pub(crate) fn list(&self, locks: &[LockInfo]) {
        if self.is_json() {
            for info in locks {
                println!("{}", info_json(info));
            }
            return;
        }
        if locks.is_empty() {
            println!("no locks found");
            return;
        }
        let rows = locks
            .iter()
            .map(|i| {
                let holders: Vec<String> = i.holders.iter().map(holder_short).collect();
                [i.key.clone(), kind_str(i), holders.join(", "), fmt_ttl(i.ttl)]
            })
            .collect();
        table(["NAME", "KIND", "HOLDERS", "TTL"], rows);
    }

    /// One line per count or permit-expirable semaphore, after the locks (a blank line between
    /// the two tables); one JSON object each, as `inspect` prints it.
    pub(crate) fn list_synchronizers(&self, found: &[Synchronizer]) {
        if self.is_json() {
            for s in found {
                match s {
                    Synchronizer::Count(info) => println!("{}", latch_json(info)),
                    Synchronizer::ExpirableSemaphore(info) => {
                        println!("{}", semaphore_json(&Sem::new(info.clone(), true)))
                    }
                    _ => {}
                }
            }
            return;
        }
        println!();
        let rows: Vec<[String; 5]> = found
            .iter()
            .filter_map(|s| match s {
                Synchronizer::Count(i) => Some([
                    i.key.clone(),
                    with_entry(count_kind(i).to_owned(), &i.key),
                    format!("count {}", i.count),
                    fmt_ttl(i.ttl),
                    format!(
                        "{}, {}",
                        listening("latch", &i.latch_channel),
                        listening("semaphore", &i.semaphore_channel)
                    ),
                ]),
                Synchronizer::ExpirableSemaphore(i) => Some([
                    i.key.clone(),
                    with_entry("expirable-semaphore".to_owned(), &i.key),
                    expirable_state(i),
                    fmt_ttl(i.ttl),
                    listening("semaphore", &i.channel),
                ]),
                _ => None,
            })
            .collect();
        if rows.is_empty() {
            println!("no counts or semaphores found");
            return;
        }
        table(["NAME", "KIND", "STATE", "TTL", "LISTENERS"], rows);
    }
}
