//! `hold`: acquire, hold for a while or until Ctrl-C, release.

use std::time::Instant;

use redisson_lock::{Client, Error, LostReason};
use serde_json::json;

use crate::render::{fmt_ms, Out};
use crate::{now_ms, Failure, HoldArgs, Outcome};

/// Ctrl-C (SIGINT) and SIGTERM, listened to from the moment this is created: a signal that
/// arrives between two waits is kept for the next one (a listener created only when waiting
/// would leave a window in which the default action kills the process).
pub(crate) struct Interrupts {
    #[cfg(unix)]
    streams: Option<(tokio::signal::unix::Signal, tokio::signal::unix::Signal)>,
}

impl Interrupts {
    pub(crate) fn new() -> Interrupts {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{signal, SignalKind};
            let streams = match (signal(SignalKind::interrupt()), signal(SignalKind::terminate())) {
                (Ok(i), Ok(t)) => Some((i, t)),
                _ => None,
            };
            Interrupts { streams }
        }
        #[cfg(not(unix))]
        Interrupts {}
    }

    /// Resolves on the next Ctrl-C or SIGTERM (one received since the last call counts).
    pub(crate) async fn recv(&mut self) {
        #[cfg(unix)]
        if let Some((int, term)) = &mut self.streams {
            tokio::select! {
                _ = int.recv() => {}
                _ = term.recv() => {}
            }
            return;
        }
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    }
}

pub(crate) async fn hold(client: &Client, out: &Out, args: HoldArgs) -> Result<Outcome, Failure> {
    let name = args.name.clone();
    let kind = args.lock_kind();
    let side = kind.label();
    let started = Instant::now();
    // listen before anything else: a signal after "acquired" is printed must release, not kill
    let mut interrupts = Interrupts::new();
    let acquisition = async {
        let lock = client.any_lock(kind, &name)?;
        let lock = match args.owner {
            Some(id) => lock.with_owner(id.into()),
            None => lock,
        };
        match (args.wait, args.lease) {
            (None, None) => lock.lock().await.map(Some),
            (None, Some(lease)) => lock.lock_with_lease(lease).await.map(Some),
            (Some(wait), None) => lock.try_lock_for(wait).await,
            (Some(wait), Some(lease)) => lock.try_lock_with_lease(wait, lease).await,
        }
    };
    let acquired = tokio::select! {
        r = acquisition => r,
        _ = interrupts.recv() => {
            out.emit(
                json!({"event": "interrupted", "name": name, "waited_ms": started.elapsed().as_millis() as u64, "ts_ms": now_ms()}),
                || format!("interrupted while waiting for {name}"),
            );
            return Ok(Outcome::Interrupted);
        }
    };
    let guard = match acquired {
        Ok(Some(g)) => g,
        Ok(None) => {
            let waited = started.elapsed();
            out.emit(
                json!({"event": "not-acquired", "name": name, "waited_ms": waited.as_millis() as u64, "ts_ms": now_ms()}),
                || format!("not acquired: {name} is held by someone else (waited {})", fmt_ms(waited.as_millis() as u64)),
            );
            return Ok(Outcome::NotAcquired);
        }
        Err(e @ Error::WrongType { .. }) => return Err(e.into()),
        Err(e) => {
            return Err(Failure(format!(
                "acquiring {name} failed: {}",
                crate::describe(&e)
            )))
        }
    };

    let field = guard.field().to_owned();
    let token = guard.token();
    let held_at = Instant::now();
    out.emit(
        json!({
            "event": "acquired",
            "name": name,
            "field": field,
            "side": side,
            "token": token,
            "lease_ms": args.lease.map(|l| l.as_millis() as u64),
            "waited_ms": held_at.duration_since(started).as_millis() as u64,
            "ts_ms": now_ms(),
        }),
        || {
            let how = match args.lease {
                Some(l) => format!("lease {}, no watchdog", fmt_ms(l.as_millis() as u64)),
                None => format!(
                    "watchdog: TTL {} renewed every {}",
                    fmt_ms(client.config().lock_watchdog_timeout().as_millis() as u64),
                    fmt_ms(client.config().lock_watchdog_timeout().as_millis() as u64 / 3)
                ),
            };
            let until = match args.hold_for {
                Some(d) => format!("holding for {}", fmt_ms(d.as_millis() as u64)),
                None => "holding until Ctrl-C".to_owned(),
            };
            let side = if side == "lock" {
                String::new()
            } else {
                format!(" ({side})")
            };
            let token = token.map(|t| format!(", fencing token {t}")).unwrap_or_default();
            format!("acquired {name}{side} as {field}{token} ({how}); {until}")
        },
    );

    let lost = guard.lost();
    let for_elapsed = async {
        match args.hold_for {
            Some(d) => tokio::time::sleep(d).await,
            None => std::future::pending::<()>().await,
        }
    };
    tokio::select! {
        _ = for_elapsed => {}
        _ = interrupts.recv() => {}
        reason = lost => {
            let held = held_at.elapsed().as_millis() as u64;
            if reason == LostReason::LeaseExpired {
                drop(guard);
                out.emit(
                    json!({"event": "expired", "name": name, "field": field, "held_ms": held, "ts_ms": now_ms()}),
                    || {
                        let lease = args.lease.map(|l| fmt_ms(l.as_millis() as u64)).unwrap_or_default();
                        format!("expired {name}: the {lease} lease ran out (no longer trusted after {})", fmt_ms(held))
                    },
                );
                return Ok(Outcome::Done);
            }
            drop(guard);
            return Err(Failure(format!("lost {name} after {}: {reason}", fmt_ms(held))));
        }
    }
    let held = held_at.elapsed().as_millis() as u64;
    match guard.unlock().await {
        Ok(_) => {
            out.emit(
                json!({"event": "released", "name": name, "field": field, "held_ms": held, "ts_ms": now_ms()}),
                || format!("released {name} after {}", fmt_ms(held)),
            );
            Ok(Outcome::Done)
        }
        Err(Error::NotHeld { .. }) => Err(Failure(format!(
            "{name} was no longer held by {field} at release (lease ran out or force-unlocked)"
        ))),
        Err(e) => Err(Failure(format!(
            "releasing {name} failed: {}",
            crate::describe(&e)
        ))),
    }
}
