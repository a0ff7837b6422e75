//! Pushes from the server: unlock messages wake a channel's waiters; a server-side SUNSUBSCRIBE
//! or a dropped connection makes subscriptions stale and wakes everyone; tracking invalidations
//! (and a dropped connection) go to the loss watch.

use std::sync::Arc;

use redis::{PushInfo, PushKind, Value};

use super::channel::{ChannelsHandle, Messages};
use super::invalidated::Invalidated;

/// Where the pub/sub connection's pushes go: the channels' waiters and the loss watch.
#[derive(Clone, Default)]
pub(crate) struct Pushes {
    pub(crate) channels: ChannelsHandle,
    pub(crate) invalidated: Arc<Invalidated>,
}

/// Handles every push from the server; must not block.
pub(crate) fn push_handler(
    pushes: Pushes,
) -> impl Fn(PushInfo) -> std::result::Result<(), ()> + Send + Sync + 'static {
    move |push: PushInfo| {
        deliver(&pushes, push);
        Ok(())
    }
}

/// The hub's side of a Sentinel link: what the master's pub/sub connection pushes goes to the
/// hub's channels, and a move of the master wakes every waiter.
pub(crate) struct HubSink(pub(crate) Pushes);

impl crate::sentinel::PushSink for HubSink {
    fn push(&self, push: PushInfo) {
        deliver(&self.0, push);
    }

    fn wake_all(&self) {
        self.0.invalidated.disconnected();
        for ch in self.0.channels.lock().values() {
            ch.notify.notify_waiters();
            ch.notify.notify_one();
        }
    }
}

/// Delivers one push to the channels' waiters or the loss watch.
fn deliver(pushes: &Pushes, push: PushInfo) {
    let channels = &pushes.channels;
    match push.kind {
        // tracked keys changed: a list of keys, or none (the keyspace was flushed)
        PushKind::Invalidate => match push.data.first() {
            Some(Value::Array(keys)) => pushes.invalidated.keys(keys.iter().filter_map(|k| match k {
                Value::BulkString(b) => Some(std::sync::Arc::from(String::from_utf8_lossy(b))),
                _ => None,
            })),
            _ => pushes.invalidated.everything(),
        },
        PushKind::Message | PushKind::SMessage => {
            if let Some(msg) = redis::Msg::from_push_info(push) {
                let ch = channels.lock().get(msg.get_channel_name()).cloned();
                if let Some(ch) = ch {
                    ch.note_message();
                    match (ch.messages, msg.get_payload_bytes()) {
                        // (waiters register before they read Redis, so none is missed)
                        (Messages::WakeAll, _) => ch.notify.notify_waiters(),
                        (Messages::Permits, payload) => {
                            match std::str::from_utf8(payload)
                                .ok()
                                .and_then(|p| p.parse::<i64>().ok())
                            {
                                Some(n) => ch.wake_some(n),
                                None => ch.notify.notify_waiters(),
                            }
                        }
                        (Messages::Unlock, b"0") => ch.notify.notify_one(),
                        (Messages::Unlock, b"1") => ch.notify.notify_waiters(),
                        (Messages::Unlock, other) => tracing::trace!(
                            channel = msg.get_channel_name(),
                            payload = ?String::from_utf8_lossy(other),
                            "ignoring unknown unlock message"
                        ),
                    }
                }
            }
        }
        // our own SUNSUBSCRIBE is confirmed this way too, but only once nobody uses the
        // channel; with users, the server dropped it (the slot moved to another node)
        PushKind::SUnsubscribe => {
            let name = push.data.first().and_then(|v| match v {
                redis::Value::BulkString(b) => Some(String::from_utf8_lossy(b).into_owned()),
                _ => None,
            });
            let ch = name.and_then(|n| channels.lock().get(&n).cloned());
            if let Some(ch) = ch {
                // (no users: our own SUNSUBSCRIBE's confirmation)
                if ch.server_dropped(false) {
                    tracing::debug!(
                        "the server dropped a sharded subscription (slot moved): waiters re-subscribe"
                    );
                    ch.notify.notify_waiters();
                    ch.notify.notify_one();
                }
            }
        }
        // Messages published while the connection was down are lost. Every subscription
        // counts as dropped: its waiters re-try at once, join again (a SUBSCRIBE that
        // completes once the connection is back, or fails and leaves them polling every
        // `poll_interval`), and re-try once more after it: one re-poll per waiter after the
        // reconnect, however long they would otherwise sleep.
        PushKind::Disconnection => {
            tracing::debug!("pub/sub connection dropped: every waiter re-tries and re-subscribes");
            pushes.invalidated.disconnected();
            for ch in channels.lock().values() {
                // a lingering subscription too: a waiter joining it must not think it listens
                ch.server_dropped(true);
                ch.notify.notify_waiters();
                ch.notify.notify_one();
            }
        }
        _ => {}
    }
}
