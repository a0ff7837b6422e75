//! One channel's state: its waiters' `Notify`, what its users want and what the server is known
//! to have, and the step (SUBSCRIBE or UNSUBSCRIBE) that would bring the two together.

use std::sync::Arc;
use std::time::Instant;

use foldhash::HashMap;

use super::health::Failure;
use crate::primitives::{Mutex, Notify};

pub(crate) type ChannelsHandle = Arc<Mutex<HashMap<String, Arc<Channel>>>>;

/// What a message on a channel means for its local waiters (fixed by whoever subscribes first;
/// a channel name belongs to one kind of object, so every subscriber means the same).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Messages {
    /// The locks' unlock messages: `0` wakes one waiter (or leaves a permit for the next), `1`
    /// every waiter; anything else is ignored.
    Unlock,
    /// Any message wakes every waiter, who each read the state in Redis again (a latch's
    /// `0`/`1`).
    WakeAll,
    /// A semaphore's messages: a number of permits now available (or given back); it wakes
    /// that many local waiters at most (as Redisson's waiters: `min(payload, local waiters)`),
    /// none for zero or less; anything else wakes every waiter, who read Redis again.
    Permits,
}

pub(crate) struct Channel {
    pub(crate) messages: Messages,
    pub(crate) notify: Notify,
    /// When the last unlock message arrived (ms since [`clock_ms`]'s origin; 0: never).
    last_message_ms: std::sync::atomic::AtomicU64,
    pub(super) state: Mutex<State>,
    /// Signalled whenever a SUBSCRIBE of this channel ends (joiners wait on it).
    pub(super) settled: Notify,
    /// Wakes a driver that sleeps between UNSUBSCRIBE retries when a user arrives.
    pub(super) kick: Notify,
}

/// What is known about one channel. Lock order: the channel map, then a channel's state.
#[derive(Default)]
pub(super) struct State {
    /// Local users (waiters holding or waiting for a `Subscription`).
    pub(super) users: usize,
    /// The server confirmed a SUBSCRIBE and no UNSUBSCRIBE has been sent since.
    pub(super) subscribed: bool,
    /// A SUBSCRIBE may have reached the server and no UNSUBSCRIBE has been confirmed since.
    pub(super) maybe_subscribed: bool,
    /// A user waits for a SUBSCRIBE that has not been sent yet.
    pub(super) requested: bool,
    /// A SUBSCRIBE is in flight.
    pub(super) subscribing: bool,
    /// A driver task runs for this channel (the only one that sends its commands).
    pub(super) driving: bool,
    /// Counted in the `redisson_lock_subscriptions` gauge (metrics).
    pub(super) counted: bool,
    /// SUBSCRIBEs of this channel that failed so far (a joiner fails on the next one).
    pub(super) failures: u64,
    /// How many times the subscription was dropped without us asking: a sharded channel's slot
    /// moved to another node (Redis sends SUNSUBSCRIBE), or the connection broke. A
    /// [`Subscription`](super::Subscription) made before the last drop is stale: its waiter
    /// subscribes again.
    pub(super) dropped: u64,
    pub(super) last_failure: Option<Failure>,
}

pub(super) enum Change {
    Subscribe,
    Unsubscribe,
}

impl State {
    pub(super) fn work(&self) -> Option<Change> {
        if self.users > 0 && self.requested && !self.subscribed {
            Some(Change::Subscribe)
        } else if self.users == 0 && self.maybe_subscribed {
            Some(Change::Unsubscribe)
        } else {
            None
        }
    }
}

impl Channel {
    pub(crate) fn new(messages: Messages) -> Channel {
        Channel {
            messages,
            notify: Notify::new(),
            last_message_ms: std::sync::atomic::AtomicU64::new(0),
            state: Mutex::new(State::default()),
            settled: Notify::new(),
            kick: Notify::new(),
        }
    }

    /// Records that an unlock message arrived now.
    pub(crate) fn note_message(&self) {
        self.last_message_ms
            .store(clock_ms().max(1), std::sync::atomic::Ordering::Relaxed);
    }

    /// Whether an unlock message arrived at or after `since` (a [`clock_ms`] reading).
    pub(crate) fn message_since(&self, since: u64) -> bool {
        self.last_message_ms.load(std::sync::atomic::Ordering::Relaxed) >= since.max(1)
    }

    /// The server no longer delivers this channel's messages (it dropped the subscription, or
    /// the connection broke): a confirmed subscription with users (or, `lingering_too`, one
    /// lingering without users) counts as dropped, so its
    /// [`Subscription`](super::Subscription)s are stale and their waiters join again. Returns
    /// whether it was.
    /// Wakes at most `n` of the waiters registered now (`users` bounds it: more would only
    /// store a wake-up for a later waiter).
    pub(super) fn wake_some(&self, n: i64) {
        let users = self.state.lock().users;
        let n = usize::try_from(n).unwrap_or(0).min(users.max(1));
        for _ in 0..n {
            self.notify.notify_one();
        }
    }

    pub(super) fn server_dropped(&self, lingering_too: bool) -> bool {
        let mut st = self.state.lock();
        let dropped = (st.users > 0 || lingering_too) && st.subscribed && !st.subscribing;
        if dropped {
            st.subscribed = false;
            st.dropped += 1;
        }
        dropped
    }
}

/// Milliseconds on a monotonic clock local to this process (for comparing message times).
pub(crate) fn clock_ms() -> u64 {
    static ORIGIN: std::sync::LazyLock<Instant> = std::sync::LazyLock::new(Instant::now);
    ORIGIN.elapsed().as_millis() as u64
}
