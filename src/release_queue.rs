//! The queue of releases from dropped guards: one worker per client runs them (guards may be
//! dropped anywhere, even outside a runtime), and shutdown can wait until it is empty.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use tokio::sync::{mpsc, Notify};

/// A release queued by a dropped guard.
pub(crate) type ReleaseJob = Box<dyn FnOnce() -> futures::future::BoxFuture<'static, ()> + Send>;

/// The queue of releases from dropped guards, run by one worker per client (guards may be
/// dropped anywhere, even outside a runtime); it can be flushed (shutdown).
pub(crate) struct ReleaseQueue {
    tx: mpsc::UnboundedSender<ReleaseJob>,
    pending: AtomicUsize,
    idle: Notify,
}

impl ReleaseQueue {
    /// Starts the worker on the current runtime.
    pub(crate) fn start() -> Arc<ReleaseQueue> {
        let (tx, mut rx) = mpsc::unbounded_channel::<ReleaseJob>();
        let queue = Arc::new(ReleaseQueue {
            tx,
            pending: AtomicUsize::new(0),
            idle: Notify::new(),
        });
        let weak = Arc::downgrade(&queue);
        tokio::spawn(async move {
            while let Some(job) = rx.recv().await {
                let weak = weak.clone();
                tokio::spawn(async move {
                    job().await;
                    if let Some(q) = weak.upgrade() {
                        q.done();
                    }
                });
            }
        });
        queue
    }

    /// Queues a job; false when the worker is gone.
    pub(crate) fn push(&self, job: ReleaseJob) -> bool {
        self.pending.fetch_add(1, Ordering::SeqCst);
        if self.tx.send(job).is_err() {
            self.done();
            return false;
        }
        true
    }

    fn done(&self) {
        if self.pending.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.idle.notify_waiters();
        }
    }

    /// Waits until every queued release has finished.
    pub(crate) async fn flush(&self) {
        loop {
            let idle = self.idle.notified();
            let mut idle = std::pin::pin!(idle);
            idle.as_mut().enable();
            if self.pending.load(Ordering::SeqCst) == 0 {
                return;
            }
            idle.await;
        }
    }

    pub(crate) fn pending(&self) -> usize {
        self.pending.load(Ordering::SeqCst)
    }
}
