//! The synchronisation primitives of the client's shared state machines (the hold table and its
//! turns, hold records, the pub/sub hub): `parking_lot`'s mutex and tokio's `Notify` and timers
//! in the crate, and under the model checker (`--cfg redisson_lock_loom`, see `scripts/test`)
//! loom's, so that loom explores every interleaving of the real code.
//!
//! Under loom, `Notify` is our own implementation of tokio's contract on loom's mutex (the
//! part of it this crate relies on: a `notified()` future counts `notify_waiters` calls from
//! its creation on; `enable` registers it for `notify_one` or takes a stored permit; a
//! registered future dropped after `notify_one` picked it passes the permit on), and time does
//! not pass: sleeps end at once and timeouts never fire, so every wait ends by its
//! notification, and a lost wake-up shows as a deadlock.

#[cfg(not(redisson_lock_loom))]
mod imp {
    pub(crate) use parking_lot::{Mutex, MutexGuard};
    pub(crate) use tokio::sync::futures::Notified;
    pub(crate) use tokio::sync::Notify;
    pub(crate) use tokio::time::{sleep, sleep_until, timeout};
}

#[cfg(redisson_lock_loom)]
mod imp {
    use std::future::Future;
    use std::pin::Pin;
    use std::task::{Context, Poll, Waker};
    use std::time::Duration;

    /// loom's mutex with `parking_lot`'s signature (no poisoning).
    #[derive(Debug, Default)]
    pub(crate) struct Mutex<T>(loom::sync::Mutex<T>);

    pub(crate) type MutexGuard<'a, T> = loom::sync::MutexGuard<'a, T>;

    impl<T> Mutex<T> {
        pub(crate) fn new(value: T) -> Mutex<T> {
            Mutex(loom::sync::Mutex::new(value))
        }

        pub(crate) fn lock(&self) -> MutexGuard<'_, T> {
            match self.0.lock() {
                Ok(g) => g,
                Err(poisoned) => poisoned.into_inner(),
            }
        }
    }

    #[derive(Default)]
    struct State {
        /// `notify_waiters` calls so far.
        generation: u64,
        /// A `notify_one` that found no registered waiter.
        permit: bool,
        /// Registered futures, oldest first.
        waiters: Vec<Waiter>,
        next_id: u64,
    }

    struct Waiter {
        id: u64,
        waker: Option<Waker>,
        /// Picked by `notify_one`.
        notified: bool,
    }

    impl State {
        /// Hands one notification to the oldest registered waiter not picked yet, else stores it.
        fn notify_one(&mut self) -> Option<Waker> {
            match self.waiters.iter_mut().find(|w| !w.notified) {
                Some(w) => {
                    w.notified = true;
                    w.waker.take()
                }
                None => {
                    self.permit = true;
                    None
                }
            }
        }
    }

    /// tokio's `Notify` contract on loom's mutex.
    #[derive(Default)]
    pub(crate) struct Notify {
        state: loom::sync::Mutex<State>,
    }

    impl std::fmt::Debug for Notify {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("Notify")
        }
    }

    impl Notify {
        pub(crate) fn new() -> Notify {
            Notify::default()
        }

        fn state(&self) -> loom::sync::MutexGuard<'_, State> {
            match self.state.lock() {
                Ok(g) => g,
                Err(poisoned) => poisoned.into_inner(),
            }
        }

        pub(crate) fn notified(&self) -> Notified<'_> {
            let generation = self.state().generation;
            Notified {
                notify: self,
                generation,
                id: None,
                done: false,
            }
        }

        pub(crate) fn notify_one(&self) {
            let waker = self.state().notify_one();
            if let Some(w) = waker {
                w.wake();
            }
        }

        pub(crate) fn notify_waiters(&self) {
            let wakers: Vec<Waker> = {
                let mut s = self.state();
                s.generation += 1;
                s.waiters.iter_mut().filter_map(|w| w.waker.take()).collect()
            };
            for w in wakers {
                w.wake();
            }
        }
    }

    /// A future that ends with a notification (see [`Notify`]).
    pub(crate) struct Notified<'a> {
        notify: &'a Notify,
        /// `notify_waiters` calls when it was made.
        generation: u64,
        /// Registered under this id.
        id: Option<u64>,
        done: bool,
    }

    impl Notified<'_> {
        /// Registers for `notify_one` (or takes a stored permit) without waiting.
        pub(crate) fn enable(self: Pin<&mut Self>) -> bool {
            self.get_mut().poll_with(None).is_ready()
        }

        fn poll_with(&mut self, waker: Option<&Waker>) -> Poll<()> {
            if self.done {
                return Poll::Ready(());
            }
            let mut s = self.notify.state();
            let pos = self.id.and_then(|id| s.waiters.iter().position(|w| w.id == id));
            if s.generation != self.generation || pos.is_some_and(|i| s.waiters[i].notified) {
                if let Some(i) = pos {
                    let w = s.waiters.remove(i);
                    if w.notified && s.generation != self.generation {
                        // ended by `notify_waiters`: the `notify_one` it was picked for goes on
                        let next = s.notify_one();
                        drop(s);
                        if let Some(n) = next {
                            n.wake();
                        }
                    }
                }
                self.done = true;
                return Poll::Ready(());
            }
            match pos {
                Some(i) => {
                    if let Some(w) = waker {
                        s.waiters[i].waker = Some(w.clone());
                    }
                }
                None if s.permit => {
                    s.permit = false;
                    self.done = true;
                    return Poll::Ready(());
                }
                None => {
                    let id = s.next_id;
                    s.next_id += 1;
                    s.waiters.push(Waiter {
                        id,
                        waker: waker.cloned(),
                        notified: false,
                    });
                    self.id = Some(id);
                }
            }
            Poll::Pending
        }
    }

    impl Future for Notified<'_> {
        type Output = ();

        fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
            self.get_mut().poll_with(Some(cx.waker()))
        }
    }

    impl Drop for Notified<'_> {
        fn drop(&mut self) {
            let Some(id) = self.id.filter(|_| !self.done) else {
                return;
            };
            let mut s = self.notify.state();
            let Some(i) = s.waiters.iter().position(|w| w.id == id) else {
                return;
            };
            let w = s.waiters.remove(i);
            if w.notified {
                // picked by `notify_one` but never consumed: the next waiter gets it
                let next = s.notify_one();
                drop(s);
                if let Some(n) = next {
                    n.wake();
                }
            }
        }
    }

    /// Time does not pass under the model: a sleep ends at once (after yielding, so that other
    /// threads may run first).
    pub(crate) async fn sleep(_: Duration) {
        loom::thread::yield_now();
    }

    /// See [`sleep`].
    pub(crate) async fn sleep_until(_: tokio::time::Instant) {
        loom::thread::yield_now();
    }

    /// Never fires under the model: `fut` ends by its own notification or not at all (a
    /// deadlock loom reports).
    pub(crate) async fn timeout<F: Future>(_: Duration, fut: F) -> Result<F::Output, Elapsed> {
        Ok(fut.await)
    }

    /// A timeout that fired (never, under the model).
    #[derive(Debug)]
    pub(crate) struct Elapsed;
}

pub(crate) use imp::*;
