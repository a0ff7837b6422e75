//! The client's background work: everything that outlives the call that started it — releases
//! of dropped guards and cancelled unlocks, the settling of acquisitions abandoned while in
//! flight (and the release of what Redis granted them), the fair queue's give-ups.
//!
//! One worker per client runs it (guards may be dropped anywhere, even outside a runtime). It is
//! the one owner of that work: [`Client::shutdown`](crate::Client::shutdown) waits until
//! nothing is open, and reports what failed once the client was closing. Work that a caller
//! will finish itself or hand over later (a fair waiter's give-up) holds a [`Ticket`] meanwhile,
//! so shutdown waits for it too.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use foldhash::HashMap;
use parking_lot::Mutex;
use tokio::sync::{mpsc, Notify};

use crate::error::Result;

/// A piece of background work about the lock `key`: `Err` when it could not do what it is for
/// (a release that failed: the lock expires with its TTL).
pub(crate) type Job = Box<dyn FnOnce() -> futures::future::BoxFuture<'static, Result<()>> + Send>;

/// The background work of one client.
pub(crate) struct Background {
    tx: mpsc::UnboundedSender<(u64, Job)>,
    state: Mutex<State>,
    /// Woken when the last open piece of work ends.
    idle: Notify,
    /// The client is shutting down: failures are kept for its report.
    closing: AtomicBool,
}

#[derive(Default)]
struct State {
    next: u64,
    /// Work not finished: queued or running jobs and live tickets, with their lock's key.
    open: HashMap<u64, Open>,
    /// Open jobs (not tickets).
    jobs: usize,
    /// Keys and errors of the work that failed while the client was closing.
    failed: Vec<(Arc<str>, String)>,
}

struct Open {
    key: Arc<str>,
    job: bool,
}

/// Work a caller will finish or queue later, counted as open until dropped.
pub(crate) struct Ticket {
    background: Arc<Background>,
    id: u64,
}

impl Drop for Ticket {
    fn drop(&mut self) {
        self.background.end(self.id, Ok(()));
    }
}

impl Background {
    /// Starts the worker on the current runtime.
    pub(crate) fn start() -> Arc<Background> {
        let (tx, mut rx) = mpsc::unbounded_channel::<(u64, Job)>();
        let background = Arc::new(Background {
            tx,
            state: Mutex::new(State::default()),
            idle: Notify::new(),
            closing: AtomicBool::new(false),
        });
        let weak = Arc::downgrade(&background);
        tokio::spawn(async move {
            while let Some((id, job)) = rx.recv().await {
                let weak = weak.clone();
                tokio::spawn(async move {
                    let r = job().await;
                    if let Some(b) = weak.upgrade() {
                        b.end(id, r);
                    }
                });
            }
        });
        background
    }

    fn open(&self, key: &Arc<str>, job: bool) -> u64 {
        let mut s = self.state.lock();
        s.next += 1;
        let id = s.next;
        s.open.insert(
            id,
            Open {
                key: key.clone(),
                job,
            },
        );
        if job {
            s.jobs += 1;
        }
        id
    }

    fn end(&self, id: u64, result: Result<()>) {
        let mut s = self.state.lock();
        let Some(open) = s.open.remove(&id) else { return };
        if open.job {
            s.jobs -= 1;
        }
        if let Err(e) = result {
            if self.closing.load(Ordering::SeqCst) {
                s.failed.push((open.key, e.to_string()));
            }
        }
        if s.open.is_empty() {
            self.idle.notify_waiters();
        }
    }

    /// Queues `job` about the lock `key`; false when the worker is gone (its runtime stopped).
    pub(crate) fn push(&self, key: &Arc<str>, job: Job) -> bool {
        let id = self.open(key, true);
        if let Err(mpsc::error::SendError((id, _))) = self.tx.send((id, job)) {
            self.end(id, Ok(()));
            return false;
        }
        true
    }

    /// Counts work about `key` that the caller will finish or queue later as open until the
    /// ticket is dropped (queue the job first, then drop the ticket).
    pub(crate) fn ticket(self: &Arc<Self>, key: &Arc<str>) -> Ticket {
        Ticket {
            id: self.open(key, false),
            background: self.clone(),
        }
    }

    /// From now on, failures are kept for [`take_failures`](Self::take_failures).
    pub(crate) fn close(&self) {
        self.closing.store(true, Ordering::SeqCst);
    }

    /// Waits until no work is open.
    pub(crate) async fn flush(&self) {
        loop {
            let idle = self.idle.notified();
            let mut idle = std::pin::pin!(idle);
            idle.as_mut().enable();
            if self.is_idle() {
                return;
            }
            idle.await;
        }
    }

    pub(crate) fn is_idle(&self) -> bool {
        self.state.lock().open.is_empty()
    }

    /// Jobs queued or running.
    pub(crate) fn pending(&self) -> usize {
        self.state.lock().jobs
    }

    /// The keys of the work still open.
    pub(crate) fn open_keys(&self) -> Vec<Arc<str>> {
        self.state.lock().open.values().map(|o| o.key.clone()).collect()
    }

    /// The keys and errors of the work that failed while the client was closing.
    pub(crate) fn take_failures(&self) -> Vec<(Arc<str>, String)> {
        std::mem::take(&mut self.state.lock().failed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn flush_waits_for_jobs_and_tickets() {
        let b = Background::start();
        let key: Arc<str> = "k".into();
        let ticket = b.ticket(&key);
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        assert!(b.push(
            &key,
            Box::new(move || Box::pin(async move {
                let _ = rx.await;
                Err(crate::Error::Shutdown)
            }))
        ));
        assert_eq!(b.pending(), 1);
        b.close();
        let flush = {
            let b = b.clone();
            tokio::spawn(async move { b.flush().await })
        };
        tokio::task::yield_now().await;
        drop(ticket);
        tokio::task::yield_now().await;
        assert!(!flush.is_finished(), "the job is still running");
        tx.send(()).unwrap();
        tokio::time::timeout(Duration::from_secs(5), flush)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(b.pending(), 0);
        let failed = b.take_failures();
        assert_eq!(failed.len(), 1, "a failure while closing is kept for the report");
        assert_eq!(&*failed[0].0, "k");
    }
}
