//! One pub/sub hub per client: shared, reference-counted subscriptions to unlock channels.
//!
//! Each channel has one `Notify`. Redisson's message semantics map onto it directly:
//! `0` → `notify_one` (wake one local waiter, or store one permit for the next),
//! `1` → `notify_waiters` (wake every registered waiter). A waiter registers (`enable`) before
//! it re-tries the lock, so a message published between its attempt and its sleep is never lost.
//! A dropped connection wakes every waiter (they re-try at once); the connection manager
//! reconnects and re-subscribes by itself.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use redis::aio::ConnectionManager;
use redis::cluster_async::ClusterConnection;
use redis::{PushInfo, PushKind};
use tokio::sync::Notify;

use crate::error::{Error, Result};

/// The connection subscriptions are made on.
#[derive(Clone)]
pub(crate) enum PubSubConn {
    Manager(ConnectionManager),
    Cluster(ClusterConnection),
}

pub(crate) type ChannelsHandle = Arc<Mutex<HashMap<String, Arc<Channel>>>>;

pub(crate) struct Channel {
    pub(crate) notify: Notify,
    users: AtomicUsize,
    /// Serialises SUBSCRIBE/UNSUBSCRIBE of this channel; `true` while subscribed.
    subscribed: tokio::sync::Mutex<bool>,
}

pub(crate) struct Hub {
    channels: ChannelsHandle,
    conn: Option<PubSubConn>,
    sharded: bool,
}

/// Handles every push from the server; must not block.
pub(crate) fn push_handler(
    channels: ChannelsHandle,
) -> impl Fn(PushInfo) -> std::result::Result<(), ()> + Send + Sync + 'static {
    move |push: PushInfo| {
        match push.kind {
            PushKind::Message | PushKind::SMessage => {
                if let Some(msg) = redis::Msg::from_push_info(push) {
                    let ch = channels.lock().get(msg.get_channel_name()).cloned();
                    if let Some(ch) = ch {
                        match msg.get_payload_bytes() {
                            b"0" => ch.notify.notify_one(),
                            b"1" => ch.notify.notify_waiters(),
                            other => tracing::trace!(
                                channel = msg.get_channel_name(),
                                payload = ?String::from_utf8_lossy(other),
                                "ignoring unknown unlock message"
                            ),
                        }
                    }
                }
            }
            PushKind::Disconnection => {
                tracing::debug!("pub/sub connection dropped: waking every waiter");
                for ch in channels.lock().values() {
                    ch.notify.notify_waiters();
                    ch.notify.notify_one();
                }
            }
            _ => {}
        }
        Ok(())
    }
}

impl Hub {
    pub(crate) fn new_channels() -> ChannelsHandle {
        Arc::new(Mutex::new(HashMap::new()))
    }

    pub(crate) fn new(channels: ChannelsHandle, conn: Option<PubSubConn>, sharded: bool) -> Hub {
        Hub {
            channels,
            conn,
            sharded,
        }
    }

    pub(crate) fn has_connection(&self) -> bool {
        self.conn.is_some()
    }

    /// Joins `channel`, subscribing if this is its first local user. Cancel safe: dropping the
    /// future leaves the channel's user count as it was (the channel may stay subscribed until
    /// its last user leaves).
    pub(crate) async fn subscribe(
        self: &Arc<Self>,
        channel: &str,
        timeout: Duration,
    ) -> Result<Subscription> {
        let ch = {
            let mut map = self.channels.lock();
            let ch = map
                .entry(channel.to_owned())
                .or_insert_with(|| {
                    Arc::new(Channel {
                        notify: Notify::new(),
                        users: AtomicUsize::new(0),
                        subscribed: tokio::sync::Mutex::new(false),
                    })
                })
                .clone();
            ch.users.fetch_add(1, Ordering::SeqCst);
            ch
        };
        let sub = Subscription {
            hub: self.clone(),
            name: channel.to_owned(),
            ch: ch.clone(),
        };
        let Some(conn) = &self.conn else {
            return Ok(sub); // no pub/sub connection: the waiter polls
        };
        let mut subscribed = ch.subscribed.lock().await;
        if !*subscribed {
            let fut = async {
                match conn.clone() {
                    PubSubConn::Manager(mut c) => c.subscribe(channel).await,
                    PubSubConn::Cluster(mut c) if self.sharded => c.ssubscribe(channel).await,
                    PubSubConn::Cluster(mut c) => c.subscribe(channel).await,
                }
            };
            match tokio::time::timeout(timeout, fut).await {
                Ok(Ok(())) => *subscribed = true,
                Ok(Err(e)) => return Err(Error::Redis(e)),
                Err(_) => return Err(Error::CommandTimeout(timeout)),
            }
            tracing::trace!(channel, sharded = self.sharded, "subscribed");
        }
        drop(subscribed);
        Ok(sub)
    }

    async fn leave(self: Arc<Self>, name: String, ch: Arc<Channel>) {
        let mut subscribed = ch.subscribed.lock().await;
        if ch.users.load(Ordering::SeqCst) > 0 {
            return;
        }
        if *subscribed {
            if let Some(conn) = &self.conn {
                let res = match conn.clone() {
                    PubSubConn::Manager(mut c) => c.unsubscribe(&name).await,
                    PubSubConn::Cluster(mut c) if self.sharded => c.sunsubscribe(&name).await,
                    PubSubConn::Cluster(mut c) => c.unsubscribe(&name).await,
                };
                if let Err(e) = res {
                    tracing::debug!(channel = %name, error = %e, "unsubscribe failed");
                }
            }
            *subscribed = false;
            tracing::trace!(channel = %name, "unsubscribed");
        }
        let mut map = self.channels.lock();
        if ch.users.load(Ordering::SeqCst) == 0 {
            if let Some(cur) = map.get(&name) {
                if Arc::ptr_eq(cur, &ch) {
                    map.remove(&name);
                }
            }
        }
    }

    /// Number of channels with local users (for tests and diagnostics).
    pub(crate) fn channel_count(&self) -> usize {
        self.channels.lock().len()
    }

    /// Number of local waiters over all channels.
    pub(crate) fn waiter_count(&self) -> usize {
        self.channels
            .lock()
            .values()
            .map(|c| c.users.load(Ordering::SeqCst))
            .sum()
    }
}

/// One local user of a channel; leaving is automatic on drop.
pub(crate) struct Subscription {
    hub: Arc<Hub>,
    name: String,
    ch: Arc<Channel>,
}

impl Subscription {
    pub(crate) fn channel(&self) -> Arc<Channel> {
        self.ch.clone()
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        let last = {
            let _map = self.hub.channels.lock();
            self.ch.users.fetch_sub(1, Ordering::SeqCst) == 1
        };
        if last {
            if let Ok(rt) = tokio::runtime::Handle::try_current() {
                rt.spawn(self.hub.clone().leave(self.name.clone(), self.ch.clone()));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use redis::Value;

    fn message(channel: &str, payload: &str) -> PushInfo {
        PushInfo {
            kind: PushKind::Message,
            data: vec![
                Value::BulkString(channel.as_bytes().to_vec()),
                Value::BulkString(payload.as_bytes().to_vec()),
            ],
        }
    }

    async fn waiters(hub: &Arc<Hub>, n: usize) -> Vec<tokio::task::JoinHandle<()>> {
        let mut v = Vec::new();
        for _ in 0..n {
            let sub = hub.subscribe("ch", Duration::from_secs(1)).await.unwrap();
            v.push(tokio::spawn(async move { sub.channel().notify.notified().await }));
        }
        for _ in 0..10 {
            tokio::task::yield_now().await;
        }
        v
    }

    #[tokio::test]
    async fn zero_wakes_one_one_wakes_all_others_are_ignored() {
        let channels = Hub::new_channels();
        let hub = Arc::new(Hub::new(channels.clone(), None, false));
        let handler = push_handler(channels);
        let ws = waiters(&hub, 3).await;
        assert_eq!(hub.waiter_count(), 3);

        handler(message("ch", "7")).unwrap();
        handler(message("other", "0")).unwrap();
        for _ in 0..10 {
            tokio::task::yield_now().await;
        }
        assert_eq!(
            ws.iter().filter(|w| w.is_finished()).count(),
            0,
            "unknown payloads and channels wake nobody"
        );

        handler(message("ch", "0")).unwrap();
        for _ in 0..10 {
            tokio::task::yield_now().await;
        }
        assert_eq!(
            ws.iter().filter(|w| w.is_finished()).count(),
            1,
            "`0` wakes exactly one"
        );

        handler(message("ch", "1")).unwrap();
        for w in ws {
            tokio::time::timeout(Duration::from_secs(1), w)
                .await
                .unwrap()
                .unwrap();
        }
    }

    #[tokio::test]
    async fn disconnection_wakes_everyone() {
        let channels = Hub::new_channels();
        let hub = Arc::new(Hub::new(channels.clone(), None, false));
        let handler = push_handler(channels);
        let ws = waiters(&hub, 2).await;
        handler(PushInfo {
            kind: PushKind::Disconnection,
            data: vec![],
        })
        .unwrap();
        for w in ws {
            tokio::time::timeout(Duration::from_secs(1), w)
                .await
                .unwrap()
                .unwrap();
        }
    }
}
