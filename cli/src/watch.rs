//! `watch`: the live messages of a name's channels plus the changes of its state, sampled. One
//! loop ([`follow`]) serves every kind of name; what differs ([`Follow`]) is the channels, what
//! their messages mean and what a state change is: a lock (holders, TTL renewals), a count
//! (count-down latch or semaphore: the count) or a semaphore (`crate::semaphore`).

use std::time::Duration;

use redis::aio::MultiplexedConnection;
use redis::cluster_async::ClusterConnection;
use redis::{ProtocolVersion, PushInfo, PushKind};
use redisson_lock::inspect::{self, LatchInfo, LockInfo};
use redisson_lock::{Connection, Error, Ttl};
use serde_json::json;
use tokio::sync::mpsc::UnboundedReceiver;

use crate::count::{self, AsKind, View};
use crate::follow::{clock, semaphore_meaning, Follow};
use crate::hold::Interrupts;
use crate::render::COUNT_KIND;
use crate::render::{count_summary, fmt_ttl, info_json, latch_json, summary_line, ttl_ms, Out};
use crate::semaphore::SemaphoreWatch;
use crate::target::{Session, Target, Topology};
use crate::{now_ms, Failure, Outcome};

pub(crate) async fn watch(
    session: &Session,
    target: &Target,
    out: &Out,
    name: &str,
    as_kind: AsKind,
    interval: Duration,
) -> Result<Outcome, Failure> {
    let mut conn = session.client.connection();
    let at = Where {
        target,
        topology: &session.topology,
    };
    match count::view(&mut conn, name, as_kind).await? {
        View::Lock(info) => follow(conn, at, out, name, LockWatch::new(name, info), interval).await,
        View::Count(info) => follow(conn, at, out, name, CountWatch::new(name, info), interval).await,
        View::Semaphore(sem) => follow(conn, at, out, name, SemaphoreWatch::new(sem), interval).await,
    }
}

/// Where the subscription connection goes.
#[derive(Clone, Copy)]
struct Where<'a> {
    target: &'a Target,
    topology: &'a Topology,
}

/// Subscribes to what `f` listens on, says so, prints the state, then prints every message and
/// every sampled change (every `interval`, and right after each message) until Ctrl-C.
async fn follow<F: Follow>(
    mut conn: Connection,
    at: Where<'_>,
    out: &Out,
    name: &str,
    mut f: F,
    interval: Duration,
) -> Result<Outcome, Failure> {
    let (mut sub, mut rx) = subscriber(at).await?;
    let channels = f.channels();
    let patterns = f.patterns();
    sub.subscribe(&channels).await?;
    for p in &patterns {
        sub.psubscribe(p).await?;
    }
    let sharded = ssubscribe(&mut sub, &channels).await?;
    let mut listed = channels.clone();
    if sharded {
        listed.extend(channels.iter().map(|c| format!("{c} (sharded)")));
    }
    listed.extend(patterns.iter().map(|p| format!("{p} (pattern)")));
    // listen before saying so: Ctrl-C right after "watching" must stop cleanly
    let mut interrupts = Interrupts::new();
    let kind = f.kind();
    let mut v =
        json!({"event": "watching", "name": name, "channels": listed, "sharded": sharded, "ts_ms": now_ms()});
    if let Some((k, _)) = &kind {
        v["kind"] = json!(k);
    }
    out.emit(v, || {
        let kind = kind.as_ref().map(|(_, t)| format!(" ({t})")).unwrap_or_default();
        format!("watching {name}{kind} on {} (Ctrl-C to stop)", listed.join(", "))
    });
    f.print_state(out);

    let mut tick = tokio::time::interval(interval);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    tick.tick().await;
    loop {
        tokio::select! {
            _ = interrupts.recv() => break,
            push = rx.recv() => {
                if message(out, name, push, |c, p| f.meaning(c, p))? {
                    // show what the message changed right away
                    sample(&mut f, &mut conn, out).await?;
                }
            }
            _ = tick.tick() => {
                // A change this sample sees may come from a call that also published (an
                // unlock): its message is printed first. One round trip on the subscription
                // connection brings every message published before the change into `rx`.
                let held = out.holding();
                sample(&mut f, &mut conn, &held).await?;
                if held.has_held_lines() {
                    sub.barrier().await?;
                    while let Ok(push) = rx.try_recv() {
                        message(out, name, Some(push), |c, p| f.meaning(c, p))?;
                    }
                }
                held.flush();
            }
        }
    }
    Ok(Outcome::Done)
}

/// One sample; a transient failure (Redis briefly unreachable) is a warning, not the end.
async fn sample<F: Follow>(f: &mut F, conn: &mut Connection, out: &Out) -> Result<(), Failure> {
    match f.sample(conn, out).await {
        Ok(()) => Ok(()),
        Err(e) if e.is_transient() => {
            eprintln!("redisson-lock: warning: {e} (still watching)");
            Ok(())
        }
        Err(e) => Err(f.failure(e)),
    }
}

/// The subscription connection: to the one server (or master), or through a cluster (where
/// classic channels may be subscribed on any node, sharded ones on their slot's master).
enum Sub {
    Node(MultiplexedConnection),
    Cluster(ClusterConnection),
}

impl Sub {
    async fn subscribe(&mut self, channels: &[String]) -> redis::RedisResult<()> {
        match self {
            Sub::Node(c) => c.subscribe(channels).await,
            Sub::Cluster(c) => c.subscribe(channels).await,
        }
    }

    async fn psubscribe(&mut self, pattern: &str) -> redis::RedisResult<()> {
        match self {
            Sub::Node(c) => c.psubscribe(pattern).await,
            Sub::Cluster(c) => c.psubscribe(pattern).await,
        }
    }

    /// A round trip on the subscription connection: the messages the server sent on it before
    /// are in the push channel when it returns (through a cluster, where messages come from
    /// several nodes, nothing is waited for).
    async fn barrier(&mut self) -> redis::RedisResult<()> {
        match self {
            Sub::Node(c) => redis::cmd("PING").query_async::<redis::Value>(c).await.map(drop),
            Sub::Cluster(_) => Ok(()),
        }
    }

    /// `SSUBSCRIBE` of one channel, so that the reply is exactly one confirmation.
    async fn ssubscribe(&mut self, channel: &str) -> redis::RedisResult<()> {
        match self {
            Sub::Node(c) => redis::cmd("SSUBSCRIBE")
                .arg(channel)
                .query_async::<redis::Value>(c)
                .await
                .map(drop),
            Sub::Cluster(c) => c.ssubscribe(channel).await,
        }
    }
}

/// A RESP3 connection of our own whose pushes (messages) land in the receiver.
async fn subscriber(at: Where<'_>) -> Result<(Sub, UnboundedReceiver<PushInfo>), Failure> {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel::<PushInfo>();
    if let Topology::Cluster { seed, .. } = at.topology {
        let c = at.target.cluster_subscriber(seed, tx).await?;
        return Ok((Sub::Cluster(c), rx));
    }
    let node = at.topology.node().clone();
    let settings = node.redis_settings().clone().set_protocol(ProtocolVersion::RESP3);
    let resp3 = at.target.raw(node.set_redis_settings(settings))?;
    let config = redis::AsyncConnectionConfig::new()
        .set_push_sender(tx)
        .set_connection_timeout(Some(crate::target::TIMEOUT));
    let sub = resp3
        .get_multiplexed_async_connection_with_config(&config)
        .await?;
    Ok((Sub::Node(sub), rx))
}

/// `SSUBSCRIBE`s each channel (sharded pub/sub: Redis 7+, what Redisson uses in a cluster), one
/// per command. Whether the server has it.
async fn ssubscribe(sub: &mut Sub, channels: &[String]) -> Result<bool, Failure> {
    let mut sharded = true;
    for c in channels {
        if let Err(e) = sub.ssubscribe(c).await {
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

const UNKNOWN: &str = "unknown message (Redisson ignores it)";
const UNEXPECTED: &str = "message on an unexpected channel";

/// A lock: its unlock channels (plain, read-write, fair waiters'), holders and TTL.
struct LockWatch {
    name: String,
    lock: String,
    rw: String,
    info: LockInfo,
    last_key: String,
}

impl LockWatch {
    fn new(name: &str, info: LockInfo) -> LockWatch {
        LockWatch {
            name: name.to_owned(),
            lock: inspect::lock_channel(name),
            rw: inspect::rwlock_channel(name),
            last_key: state_key(&info),
            info,
        }
    }
}

impl Follow for LockWatch {
    fn kind(&self) -> Option<(&'static str, String)> {
        None
    }

    fn channels(&self) -> Vec<String> {
        vec![self.lock.clone(), self.rw.clone()]
    }

    fn patterns(&self) -> Vec<String> {
        vec![format!("{}:*", glob_escape(&self.lock))]
    }

    fn meaning(&self, channel: &str, payload: &str) -> String {
        if channel == self.lock {
            match payload {
                "0" => "unlock: wakes one waiter".to_owned(),
                _ => UNKNOWN.to_owned(),
            }
        } else if channel == self.rw {
            match payload {
                "0" => "read unlock: wakes one waiter".to_owned(),
                "1" => "write unlock: wakes every waiter".to_owned(),
                _ => UNKNOWN.to_owned(),
            }
        } else if let Some(field) = channel.strip_prefix(&format!("{}:", self.lock)) {
            match payload {
                "0" => format!("fair unlock: wakes the queue head {field}"),
                _ => UNKNOWN.to_owned(),
            }
        } else {
            UNEXPECTED.to_owned()
        }
    }

    fn print_state(&self, out: &Out) {
        let mut v = info_json(&self.info);
        v["event"] = json!("state");
        v["ts_ms"] = json!(now_ms());
        out.emit(v, || format!("{}  state   {}", clock(), summary_line(&self.info)));
    }

    async fn sample(&mut self, conn: &mut Connection, out: &Out) -> Result<(), Error> {
        let now = inspect::inspect(conn, &self.name).await?;
        let key = state_key(&now);
        let before = std::mem::replace(&mut self.info, now);
        if key != self.last_key {
            self.last_key = key;
            self.print_state(out);
        } else if let (Ttl::Expires(was), Ttl::Expires(is)) = (before.ttl, self.info.ttl) {
            // The TTL only falls by itself; a rise is a renewal (watchdog) or a re-entry.
            if is > was + Duration::from_millis(50) {
                out.emit(
                    json!({"event": "ttl", "name": self.name, "ttl_ms": ttl_ms(self.info.ttl), "renewed": true, "ts_ms": now_ms()}),
                    || format!("{}  ttl     {} (renewed)", clock(), fmt_ttl(self.info.ttl)),
                );
            }
        }
        Ok(())
    }
}

/// A count (a count-down latch or a semaphore: Redis cannot tell): both channels and the count.
struct CountWatch {
    name: String,
    latch: String,
    semaphore: String,
    info: LatchInfo,
}

impl CountWatch {
    fn new(name: &str, info: LatchInfo) -> CountWatch {
        CountWatch {
            name: name.to_owned(),
            latch: inspect::count_down_latch_channel(name),
            semaphore: inspect::semaphore_channel(name),
            info,
        }
    }
}

impl Follow for CountWatch {
    fn kind(&self) -> Option<(&'static str, String)> {
        Some(("count", COUNT_KIND.to_owned()))
    }

    fn channels(&self) -> Vec<String> {
        vec![self.latch.clone(), self.semaphore.clone()]
    }

    /// `docs/protocol.md`, "Count-down latch", and the semaphore's messages.
    fn meaning(&self, channel: &str, payload: &str) -> String {
        if channel == self.latch {
            match payload {
                "0" => "count reached zero: wakes every waiter".to_owned(),
                "1" => "count set or latch deleted: waiters read the count again".to_owned(),
                _ => UNKNOWN.to_owned(),
            }
        } else if channel == self.semaphore {
            semaphore_meaning(payload)
        } else {
            UNEXPECTED.to_owned()
        }
    }

    /// The count's state line. Subscriber counts are left out: this watch is a subscriber too.
    fn print_state(&self, out: &Out) {
        let mut v = latch_json(&self.info);
        if let Some(o) = v.as_object_mut() {
            o.remove("channels");
            o.remove("listeners");
        }
        v["event"] = json!("state");
        v["ts_ms"] = json!(now_ms());
        out.emit(v, || {
            format!("{}  state   {}", clock(), count_summary(&self.info))
        });
    }

    async fn sample(&mut self, conn: &mut Connection, out: &Out) -> Result<(), Error> {
        let now = inspect::inspect_latch(conn, &self.name).await?;
        let changed = (now.exists, now.count) != (self.info.exists, self.info.count);
        self.info = now;
        if changed {
            self.print_state(out);
        }
        Ok(())
    }

    fn failure(&self, e: Error) -> Failure {
        count::count_failure(e)
    }
}

/// The lock's state, for change detection in `watch`.
fn state_key(info: &LockInfo) -> String {
    let mut s = format!("{:?}|{:?}|", info.kind, info.mode);
    for h in &info.holders {
        s.push_str(&format!("{}={};", h.field, h.hold_count));
    }
    s.push('|');
    for w in &info.queue {
        s.push_str(&w.field);
        s.push(';');
    }
    s.push_str(&format!("|{:?}", info.token));
    s
}
