//! The in-process systems under test behind one interface: the floor, ours and rslock.

use std::sync::Arc;
use std::time::Duration;

use redisson_lock::{Client, Config, LockGuard, RLock};

use crate::raw::{Raw, LEASE_MS};

pub(crate) async fn our_client(url: &str, config: Config) -> Client {
    Client::builder()
        .url(url)
        .config(config)
        .build()
        .await
        .expect("our client")
}

pub(crate) fn rslock_manager(url: &str) -> Arc<rslock::LockManager> {
    Arc::new(rslock::LockManager::new(vec![url.to_owned()]))
}

/// A lock implementation under test, on one key.
#[derive(Clone)]
pub(crate) enum Sys {
    Floor(Raw, Arc<str>),
    /// The floor plus a background latch DEL per op (a diagnostic).
    FloorDel(Raw, Arc<str>),
    Ours(RLock),
    Rs(Arc<rslock::LockManager>, Arc<str>),
}

pub(crate) enum Held {
    Floor,
    Ours(LockGuard),
    Rs(rslock::Lock),
}

impl Sys {
    /// One uncontended acquisition (must succeed).
    pub(crate) async fn try_once(&self) -> Held {
        match self {
            Sys::Floor(raw, key) | Sys::FloorDel(raw, key) => {
                assert_eq!(raw.acquire(key).await, None, "floor key busy");
                Held::Floor
            }
            Sys::Ours(l) => Held::Ours(l.try_lock().await.unwrap().expect("free lock")),
            Sys::Rs(m, key) => Held::Rs(
                m.lock(&**key, Duration::from_millis(LEASE_MS))
                    .await
                    .expect("free rslock"),
            ),
        }
    }

    /// Waits until acquired (our `lock()`, rslock `acquire_no_guard`).
    pub(crate) async fn wait_lock(&self) -> Held {
        match self {
            Sys::Floor(..) | Sys::FloorDel(..) => unreachable!("the floor does not wait"),
            Sys::Ours(l) => Held::Ours(l.lock().await.unwrap()),
            Sys::Rs(m, key) => Held::Rs(
                m.acquire_no_guard(&**key, Duration::from_millis(LEASE_MS))
                    .await
                    .unwrap(),
            ),
        }
    }

    pub(crate) async fn release(&self, h: Held) {
        match (self, h) {
            (Sys::Floor(raw, key), Held::Floor) => raw.release(key, false).await,
            (Sys::FloorDel(raw, key), Held::Floor) => raw.release(key, true).await,
            (Sys::Ours(_), Held::Ours(g)) => {
                g.unlock().await.unwrap();
            }
            (Sys::Rs(m, _), Held::Rs(l)) => m.unlock(&l).await,
            _ => unreachable!(),
        }
    }

    /// Releases outside a timed section (the floor just deletes the key).
    pub(crate) async fn cleanup(&self, h: Held) {
        match (self, h) {
            (Sys::Floor(raw, key), Held::Floor) => raw.del(key).await,
            (s, h) => s.release(h).await,
        }
    }

    /// Untimed, after each latency iteration: waits until background work the operation left on
    /// its connection (our unlock's latch DEL) is done, so every timed operation starts quiet.
    pub(crate) async fn settle(&self) {
        match self {
            Sys::Floor(raw, _) | Sys::FloorDel(raw, _) => raw.ping().await,
            Sys::Ours(l) => {
                let _ = l.is_locked().await; // one round trip on the client's command connection
            }
            Sys::Rs(..) => {}
        }
    }
}
