//! `force-unlock`: what the command shows and asks before it deletes, and which side of a
//! read-write lock, which values of a grouped lock and which fair waiter's channel it acts on.

use std::io::{IsTerminal, Write};

use redisson_lock::inspect::{self, LockKind};
use redisson_lock::{Client, Error};

use crate::{describe, now_ms, render, Failure, Outcome};

/// `force-unlock`: inspects first (what to show and which side of a read-write lock to force),
/// then runs the library's force unlock. Both refuse a key that is not a lock by the same rule
/// (see `inspect`'s module docs and `lua/*/…force_unlock.lua`), so nothing is deleted then.
pub(crate) async fn run(
    client: &Client,
    out: &render::Out,
    name: &str,
    yes: bool,
) -> Result<Outcome, Failure> {
    let refused = |e: Error| match e {
        Error::WrongType { .. } | Error::NotALock { .. } | Error::Protocol(_) => {
            Failure(format!("{}; nothing was deleted", describe(&e)))
        }
        other => other.into(),
    };
    let info = inspect::inspect(&mut client.connection(), name)
        .await
        .map_err(refused)?;
    if !info.is_locked() {
        out.force_unlock_nothing(&info);
        return Ok(Outcome::Done);
    }
    if !yes {
        if !std::io::stdin().is_terminal() {
            return Err(Failure(format!(
                "refusing to force-unlock `{name}` without --yes (stdin is not a terminal to ask on)"
            )));
        }
        eprintln!("{}", render::summary_line(&info));
        eprint!("Force-unlock `{name}`? Its holders lose it at once. [y/N] ");
        std::io::stderr().flush()?;
        let answer = tokio::task::spawn_blocking(|| {
            let mut line = String::new();
            std::io::stdin().read_line(&mut line).map(|_| line)
        })
        .await
        .map_err(|e| Failure(format!("reading the answer failed: {e}")))??;
        if !matches!(answer.trim(), "y" | "Y" | "yes" | "YES" | "Yes") {
            eprintln!("not unlocked");
            return Ok(Outcome::Done);
        }
    }
    // the scripts check the key again (it may have changed since it was inspected)
    let (removed, channel) = match info.kind {
        Some(LockKind::ReadWrite) => {
            let rw = client.read_write_lock(name)?;
            if info.mode.as_deref() == Some("write") {
                (
                    rw.write_lock().force_unlock().await.map_err(refused)?,
                    Some(format!("{} (message 1)", inspect::rwlock_channel(name))),
                )
            } else {
                (
                    rw.read_lock().force_unlock().await.map_err(refused)?,
                    Some(format!("{} (message 0)", inspect::rwlock_channel(name))),
                )
            }
        }
        Some(LockKind::Group) => {
            // every value that names a holder, whoever it is (one script: all or none)
            let ids: Vec<&str> = info.values.iter().map(|v| v.value_id.as_str()).collect();
            (
                client
                    .group_lock_by_ids(name, &ids)?
                    .force_unlock()
                    .await
                    .map_err(refused)?,
                Some(format!("{} (message 0)", inspect::lock_channel(name))),
            )
        }
        Some(LockKind::Fair) => {
            // the script drops the stale waiters at the head (deadline past by this machine's
            // clock, as the fair lock's scripts judge it), then wakes the new head
            let now = now_ms() as i64;
            let head = info.queue.iter().find(|w| w.deadline_ms.is_none_or(|d| d > now));
            let channel =
                head.map(|w| format!("{} (message 0)", inspect::fair_waiter_channel(name, &w.field)));
            (
                client.fair_lock(name)?.force_unlock().await.map_err(refused)?,
                channel,
            )
        }
        _ => (
            client.lock(name)?.force_unlock().await.map_err(refused)?,
            Some(format!("{} (message 0)", inspect::lock_channel(name))),
        ),
    };
    out.force_unlocked(&info, removed, channel.as_deref());
    Ok(Outcome::Done)
}
