//! Cancel safety without a task per call: run a request in place, and only if the caller drops
//! it before it completes, finish it in a background task (deadpool's `DropGuard` idea, with the
//! work itself handed over instead of a clean-up).

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures::future::BoxFuture;

/// A future that, when dropped while pending, keeps running in the background and hands its
/// output to `on_abandon` (e.g. to release a lock Redis granted after the caller gave up).
///
/// The request is boxed (a pinned future can only be handed to a task from the heap); the
/// abandon handler is not (it is only ever moved).
pub(crate) struct FinishOnDrop<T: Send + 'static, A: FnOnce(T) -> BoxFuture<'static, ()> + Send + 'static> {
    fut: Option<BoxFuture<'static, T>>,
    on_abandon: Option<A>,
}

impl<T: Send + 'static, A: FnOnce(T) -> BoxFuture<'static, ()> + Send + 'static> FinishOnDrop<T, A> {
    pub(crate) fn new(fut: impl Future<Output = T> + Send + 'static, on_abandon: A) -> Self {
        FinishOnDrop {
            fut: Some(Box::pin(fut)),
            on_abandon: Some(on_abandon),
        }
    }
}

// Nothing is pinned in place: the request is boxed, the handler only ever moved.
impl<T: Send + 'static, A: FnOnce(T) -> BoxFuture<'static, ()> + Send + 'static> Unpin
    for FinishOnDrop<T, A>
{
}

impl<T: Send + 'static, A: FnOnce(T) -> BoxFuture<'static, ()> + Send + 'static> Future
    for FinishOnDrop<T, A>
{
    type Output = T;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<T> {
        let Some(fut) = self.fut.as_mut() else {
            return Poll::Pending; // polled after completion: never resolves again
        };
        match fut.as_mut().poll(cx) {
            Poll::Ready(v) => {
                self.fut = None;
                Poll::Ready(v)
            }
            Poll::Pending => Poll::Pending,
        }
    }
}

impl<T: Send + 'static, A: FnOnce(T) -> BoxFuture<'static, ()> + Send + 'static> Drop for FinishOnDrop<T, A> {
    fn drop(&mut self) {
        let (Some(fut), Some(on_abandon)) = (self.fut.take(), self.on_abandon.take()) else {
            return;
        };
        match tokio::runtime::Handle::try_current() {
            Ok(rt) => {
                rt.spawn(async move { on_abandon(fut.await).await });
            }
            Err(_) => tracing::warn!(
                "a lock request was dropped outside a runtime while in flight; if Redis applied it, \
                 the lock expires with its lease"
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    use std::time::Duration;

    #[tokio::test]
    async fn completes_in_place_and_hands_over_when_dropped() {
        let seen = Arc::new(AtomicUsize::new(0));
        let s = seen.clone();
        let done = FinishOnDrop::new(async { 7 }, move |v| {
            Box::pin(async move {
                s.fetch_add(v, Ordering::SeqCst);
            })
        })
        .await;
        assert_eq!(done, 7);
        assert_eq!(seen.load(Ordering::SeqCst), 0, "no hand-over after completion");

        let (tx, rx) = tokio::sync::oneshot::channel();
        let s = seen.clone();
        let slow = FinishOnDrop::new(
            async {
                tokio::time::sleep(Duration::from_millis(20)).await;
                5
            },
            move |v| {
                Box::pin(async move {
                    s.fetch_add(v, Ordering::SeqCst);
                    let _ = tx.send(());
                })
            },
        );
        assert!(tokio::time::timeout(Duration::from_millis(1), slow)
            .await
            .is_err());
        rx.await.unwrap();
        assert_eq!(
            seen.load(Ordering::SeqCst),
            5,
            "the abandoned request finished in the background"
        );
    }
}
