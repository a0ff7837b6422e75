//! `watch`: live unlock messages plus holder / TTL changes; for a count (a count-down latch or a
//! semaphore), the latch channel's messages plus count changes.

use std::time::{Duration, SystemTime};

use redis::aio::MultiplexedConnection;
use redis::{ProtocolVersion, PushInfo, PushKind};
use redisson_lock::inspect::{self, LatchInfo, LockInfo};
use redisson_lock::{Client, Ttl};
use serde_json::json;
use tokio::sync::mpsc::UnboundedReceiver;

use crate::count::{self, View, COUNT_KIND};
use crate::hold::Interrupts;
use crate::render::{count_summary, fmt_ttl, info_json, latch_json, summary_line, ttl_ms, Out};
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

/// A RESP3 connection of our own whose pushes (messages) land in the receiver.
async fn subscriber(url: &str) -> Result<(MultiplexedConnection, UnboundedReceiver<PushInfo>), Failure> {
    let base = redis::Client::open(url)?;
    let ci = base.get_connection_info().clone();
    let settings = ci.redis_settings().clone().set_protocol(ProtocolVersion::RESP3);
    let resp3 = redis::Client::open(ci.set_redis_settings(settings))?;
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel::<PushInfo>();
    let config = redis::AsyncConnectionConfig::new().set_push_sender(tx);
    let sub = resp3
        .get_multiplexed_async_connection_with_config(&config)
        .await?;
    Ok((sub, rx))
}

/// `SSUBSCRIBE`s each channel (sharded pub/sub: Redis 7+, what Redisson uses in a cluster), one
/// per command so that each reply is exactly one confirmation. Whether the server has it.
async fn ssubscribe(sub: &mut MultiplexedConnection, channels: &[&String]) -> Result<bool, Failure> {
    let mut sharded = true;
    for c in channels {
        let r: redis::RedisResult<redis::Value> = redis::cmd("SSUBSCRIBE").arg(c).query_async(sub).await;
        if let Err(e) = r {
            if e.is_io_error() || e.is_connection_dropped() {
                return Err(e.into());
            }
            sharded = false;
        }
    }
    Ok(sharded)
}

/// Prints `push` when it is a published message, and says whether it was one. Ends the watch
/// (an error) when the subscription connection is gone.
fn message(
    out: &Out,
    name: &str,
    push: Option<PushInfo>,
    meaning: impl Fn(&str, &str) -> String,
) -> Result<bool, Failure> {
    let Some(push) = push else {
        return Err(Failure("the subscription connection closed".into()));
    };
    match push.kind {
        PushKind::Message | PushKind::SMessage | PushKind::PMessage => {
            let is_sharded = push.kind == PushKind::SMessage;
            if let Some(msg) = redis::Msg::from_push_info(push) {
                let channel = msg.get_channel_name().to_owned();
                let payload = String::from_utf8_lossy(msg.get_payload_bytes()).into_owned();
                let meaning = meaning(&channel, &payload);
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
                    || {
                        format!(
                            "{}  message {payload} on {channel}{} ({meaning})",
                            clock(),
                            if is_sharded { " [sharded]" } else { "" }
                        )
                    },
                );
            }
            Ok(true)
        }
        PushKind::Disconnection => Err(Failure("lost the connection to redis while watching".into())),
        _ => Ok(false),
    }
}

pub(crate) async fn watch(
    client: &Client,
    url: &str,
    out: &Out,
    name: &str,
    latch: bool,
    interval: Duration,
) -> Result<Outcome, Failure> {
    let mut conn = client.connection();
    let mut info = match count::view(&mut conn, name, latch).await? {
        View::Lock(info) => info,
        View::Count(info) => return watch_count(conn, url, out, name, info, interval).await,
    };
    let (mut sub, mut rx) = subscriber(url).await?;

    let ch = Channels {
        lock: inspect::lock_channel(name),
        rw: inspect::rwlock_channel(name),
    };
    let fair_pattern = format!("{}:*", glob_escape(&ch.lock));
    sub.subscribe(&[&ch.lock, &ch.rw]).await?;
    sub.psubscribe(&fair_pattern).await?;
    let sharded = ssubscribe(&mut sub, &[&ch.lock, &ch.rw]).await?;
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
                if message(out, name, push, |c, p| ch.meaning(c, p))? {
                    // Show who (if anyone) got the lock right away.
                    sample(&mut conn, out, name, &mut info, &mut last_key).await?;
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

/// What a message on a count-down latch's channel means (`docs/protocol.md`, "Count-down latch").
fn latch_meaning(channel: &str, latch_channel: &str, payload: &str) -> String {
    if channel != latch_channel {
        return "message on an unexpected channel".to_owned();
    }
    match payload {
        "0" => "count reached zero: wakes every waiter".to_owned(),
        "1" => "count set or latch deleted: waiters read the count again".to_owned(),
        _ => "unknown message (Redisson ignores it)".to_owned(),
    }
}

/// `watch` of a count: the count-down latch channel's messages (classic and sharded) and the
/// count's changes. A semaphore's count changes show too (by sampling); its channel is not
/// listened to.
async fn watch_count(
    mut conn: redisson_lock::Connection,
    url: &str,
    out: &Out,
    name: &str,
    info: LatchInfo,
    interval: Duration,
) -> Result<Outcome, Failure> {
    let (mut sub, mut rx) = subscriber(url).await?;
    let latch_channel = inspect::count_down_latch_channel(name);
    sub.subscribe(&latch_channel).await?;
    let sharded = ssubscribe(&mut sub, &[&latch_channel]).await?;
    let mut channels = vec![latch_channel.clone()];
    if sharded {
        channels.push(format!("{latch_channel} (sharded)"));
    }
    let mut interrupts = Interrupts::new();
    out.emit(
        json!({"event": "watching", "name": name, "kind": "count", "channels": channels, "sharded": sharded, "ts_ms": now_ms()}),
        || format!("watching {name} ({COUNT_KIND}) on {} (Ctrl-C to stop)", channels.join(", ")),
    );
    print_count(out, &info);

    let mut last = (info.exists, info.count);
    let mut tick = tokio::time::interval(interval);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    tick.tick().await;
    loop {
        tokio::select! {
            _ = interrupts.recv() => break,
            push = rx.recv() => {
                if message(out, name, push, |c, p| latch_meaning(c, &latch_channel, p))? {
                    sample_count(&mut conn, out, name, &mut last).await?;
                }
            }
            _ = tick.tick() => {
                sample_count(&mut conn, out, name, &mut last).await?;
            }
        }
    }
    Ok(Outcome::Done)
}

/// The count's state line. Subscriber counts are left out: this watch is a subscriber too.
fn print_count(out: &Out, info: &LatchInfo) {
    let mut v = latch_json(info);
    if let Some(o) = v.as_object_mut() {
        o.remove("channels");
        o.remove("listeners");
    }
    v["event"] = json!("state");
    v["ts_ms"] = json!(now_ms());
    out.emit(v, || format!("{}  state   {}", clock(), count_summary(info)));
}

async fn sample_count(
    conn: &mut redisson_lock::Connection,
    out: &Out,
    name: &str,
    last: &mut (bool, i64),
) -> Result<(), Failure> {
    let now = match inspect::inspect_latch(conn, name).await {
        Ok(i) => i,
        Err(e) if e.is_transient() => {
            eprintln!("redisson-lock: warning: {e} (still watching)");
            return Ok(());
        }
        Err(e) => return Err(count::count_failure(e)),
    };
    if (now.exists, now.count) != *last {
        print_count(out, &now);
        *last = (now.exists, now.count);
    }
    Ok(())
}
