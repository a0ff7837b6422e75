//! Waiting for a synchronizer's state in Redis: the client's one wait loop
//! ([`crate::waiting`]) on the synchronizer's channel, with its metrics.

use std::future::Future;
use std::sync::Arc;
use std::time::Instant;

use crate::error::Result;
use crate::inner::ClientInner;
use crate::metrics;
use crate::pubsub::Messages;
use crate::waiting::{Between, Seen, Step, Wait};

/// The synchronizer being waited on.
pub(crate) struct WaitTarget<'a> {
    pub client: &'a Arc<ClientInner>,
    /// Its key (named in logs and errors).
    pub key: &'a Arc<str>,
    /// The channel whose messages say that the state may have changed.
    pub channel: &'a str,
    /// The metrics' `kind` label (`latch`, `semaphore`, ...).
    pub kind: &'static str,
    /// What the channel's messages mean for its local waiters.
    pub messages: Messages,
}

impl WaitTarget<'_> {
    /// Runs `step` until it is done or `deadline` passes (`None`: no deadline): `Ok(None)` when
    /// the deadline passed first (the error of the last step when that one failed).
    ///
    /// Cancel safe when `step` is (see [`crate::waiting`]).
    pub(crate) async fn until<T, F, Fut>(&self, deadline: Option<Instant>, mut step: F) -> Result<Option<T>>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<Step<T>>>,
    {
        let cfg = &self.client.config;
        let labels = metrics::Labels::new(self.kind, self.key, cfg.metrics_lock_names);
        let start = Instant::now();
        let _waiting = metrics::Waiting::new(&labels);
        let mut seen = Seen::default();
        let wait = Wait {
            client: self.client,
            key: self.key,
            between: Between::Channel {
                channel: self.channel.to_owned(),
                messages: self.messages,
                join_first: false,
                watch_gone: false,
            },
            deadline,
            once: false,
        };
        let result = wait.run(&mut seen, |_| step()).await;
        metrics::acquisition(
            &labels,
            start,
            match &result {
                Ok(Some(_)) => metrics::Outcome::Acquired {
                    attempts: seen.attempts,
                    handoff: false,
                },
                Ok(None) => metrics::Outcome::Timeout,
                Err(_) => metrics::Outcome::Error,
            },
        );
        result
    }
}
