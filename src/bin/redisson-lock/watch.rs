//! `watch`: live unlock messages plus holder / TTL changes.

use std::time::{Duration, SystemTime};

use redis::{ProtocolVersion, PushInfo, PushKind};
use redisson_lock::inspect::{self, LockInfo};
use redisson_lock::{Client, Ttl};
use serde_json::json;

use crate::hold::Interrupts;
use crate::render::{fmt_ttl, info_json, summary_line, ttl_ms, Out};
use crate::{now_ms, state_key, Failure, Outcome};

fn clock() -> String {
    let s = humantime::format_rfc3339_millis(SystemTime::now()).to_string();
    s.get(11..23).unwrap_or(&s).to_owned()
}

/// Escapes glob metacharacters for PSUBSCRIBE.
fn glob_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

struct Channels {
    lock: String,
    rw: String,
}

impl Channels {
    fn meaning(&self, channel: &str, payload: &str) -> String {
        if channel == self.lock {
            match payload {
                "0" => "unlock: wakes one waiter".to_owned(),
                _ => "unknown message (Redisson ignores it)".to_owned(),
            }
        } else if channel == self.rw {
            match payload {
                "0" => "read unlock: wakes one waiter".to_owned(),
                "1" => "write unlock: wakes every waiter".to_owned(),
                _ => "unknown message (Redisson ignores it)".to_owned(),
            }
        } else if let Some(field) = channel.strip_prefix(&format!("{}:", self.lock)) {
            match payload {
                "0" => format!("fair unlock: wakes the queue head {field}"),
                _ => "unknown message (Redisson ignores it)".to_owned(),
            }
        } else {
            "message on an unexpected channel".to_owned()
        }
    }
}

pub(crate) async fn watch(
    client: &Client,
    url: &str,
    out: &Out,
    name: &str,
    interval: Duration,
) -> Result<Outcome, Failure> {
    let mut conn = client.connection();
    let mut info = inspect::inspect(&mut conn, name).await?;

    // A RESP3 connection of our own whose pushes (messages) land in `rx`.
    let base = redis::Client::open(url)?;
    let ci = base.get_connection_info().clone();
    let settings = ci.redis_settings().clone().set_protocol(ProtocolVersion::RESP3);
    let resp3 = redis::Client::open(ci.set_redis_settings(settings))?;
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<PushInfo>();
    let config = redis::AsyncConnectionConfig::new().set_push_sender(tx);
    let mut sub = resp3
        .get_multiplexed_async_connection_with_config(&config)
        .await?;

    let ch = Channels {
        lock: inspect::lock_channel(name),
        rw: inspect::rwlock_channel(name),
    };
    let fair_pattern = format!("{}:*", glob_escape(&ch.lock));
    sub.subscribe(&[&ch.lock, &ch.rw]).await?;
    sub.psubscribe(&fair_pattern).await?;
    // Sharded pub/sub (Redis 7+; what Redisson uses in a cluster). One channel per command, so
    // each reply is exactly one confirmation.
    let mut sharded = true;
    for c in [&ch.lock, &ch.rw] {
        let r: redis::RedisResult<redis::Value> = redis::cmd("SSUBSCRIBE").arg(c).query_async(&mut sub).await;
        if let Err(e) = r {
            if e.is_io_error() || e.is_connection_dropped() {
                return Err(e.into());
            }
            sharded = false;
        }
    }
    let mut channels = vec![ch.lock.clone(), ch.rw.clone()];
    if sharded {
        channels.push(format!("{} (sharded)", ch.lock));
        channels.push(format!("{} (sharded)", ch.rw));
    }
    channels.push(format!("{fair_pattern} (pattern)"));
    // listen before saying so: Ctrl-C right after "watching" must stop cleanly
    let mut interrupts = Interrupts::new();
    out.emit(
        json!({"event": "watching", "name": name, "channels": channels, "sharded": sharded, "ts_ms": now_ms()}),
        || format!("watching {name} on {} (Ctrl-C to stop)", channels.join(", ")),
    );
    print_state(out, &info);

    let mut last_key = state_key(&info);
    let mut tick = tokio::time::interval(interval);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    tick.tick().await;
    loop {
        tokio::select! {
            _ = interrupts.recv() => break,
            push = rx.recv() => {
                let Some(push) = push else {
                    return Err(Failure("the subscription connection closed".into()));
                };
                match push.kind {
                    PushKind::Message | PushKind::SMessage | PushKind::PMessage => {
                        let is_sharded = push.kind == PushKind::SMessage;
                        if let Some(msg) = redis::Msg::from_push_info(push) {
                            let channel = msg.get_channel_name().to_owned();
                            let payload = String::from_utf8_lossy(msg.get_payload_bytes()).into_owned();
                            let meaning = ch.meaning(&channel, &payload);
                            out.emit(
                                json!({
                                    "event": "message",
                                    "name": name,
                                    "channel": channel,
                                    "message": payload,
                                    "meaning": meaning,
                                    "sharded": is_sharded,
                                    "ts_ms": now_ms(),
                                }),
                                || format!(
                                    "{}  message {payload} on {channel}{} ({meaning})",
                                    clock(),
                                    if is_sharded { " [sharded]" } else { "" }
                                ),
                            );
                        }
                        // Show who (if anyone) got the lock right away.
                        sample(&mut conn, out, name, &mut info, &mut last_key).await?;
                    }
                    PushKind::Disconnection => {
                        return Err(Failure("lost the connection to redis while watching".into()));
                    }
                    _ => {}
                }
            }
            _ = tick.tick() => {
                sample(&mut conn, out, name, &mut info, &mut last_key).await?;
            }
        }
    }
    Ok(Outcome::Done)
}

fn print_state(out: &Out, info: &LockInfo) {
    let mut v = info_json(info);
    v["event"] = json!("state");
    v["ts_ms"] = json!(now_ms());
    out.emit(v, || format!("{}  state   {}", clock(), summary_line(info)));
}

async fn sample(
    conn: &mut redisson_lock::Connection,
    out: &Out,
    name: &str,
    info: &mut LockInfo,
    last_key: &mut String,
) -> Result<(), Failure> {
    let now = match inspect::inspect(conn, name).await {
        Ok(i) => i,
        Err(e) if e.is_transient() => {
            eprintln!("redisson-lock: warning: {e} (still watching)");
            return Ok(());
        }
        Err(e) => return Err(e.into()),
    };
    let key = state_key(&now);
    if key != *last_key {
        print_state(out, &now);
        *last_key = key;
    } else if let (Ttl::Expires(before), Ttl::Expires(after)) = (info.ttl, now.ttl) {
        // The TTL only falls by itself; a rise is a renewal (watchdog) or a re-entry.
        if after > before + Duration::from_millis(50) {
            out.emit(
                json!({"event": "ttl", "name": name, "ttl_ms": ttl_ms(now.ttl), "renewed": true, "ts_ms": now_ms()}),
                || format!("{}  ttl     {} (renewed)", clock(), fmt_ttl(now.ttl)),
            );
        }
    }
    *info = now;
    Ok(())
}
