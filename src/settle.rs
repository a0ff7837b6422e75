//! An acquisition whose outcome nobody waits for any more: its caller was dropped while the
//! request might be in Redis, its reply was lost with no time left to ask, or the client is
//! shutting down. Written once for every lock kind and synchronizer: the request is never sent
//! again; Redis is asked whether it was granted (which also makes sure it never will be if it
//! was not), again after each failure for as long as [`Config::settling`](crate::Config) after
//! it was sent (Redis may run a request long after it was sent: a copy waits in the socket while
//! Redis is stopped or busy), and a grant found is given back at once, since nobody will use it.
//!
//! The work runs on the client's background queue, which
//! [`Client::shutdown`](crate::Client::shutdown) waits for.

use std::future::Future;
use std::sync::Arc;
use std::time::Instant;

use crate::error::Result;
use crate::inner::ClientInner;

/// What an acquisition of unknown outcome needs to be settled: each lock kind and synchronizer
/// says how to ask Redis and how to give a grant back; the asking and the give-back are
/// [`settle_in_background`]'s.
pub(crate) trait Unsettled: Send + 'static {
    /// What a grant found in Redis carries (counts, tokens) for its give-back.
    type Found: Send;

    /// The client that sent it.
    fn client(&self) -> &Arc<ClientInner>;
    /// The key it acquires (logs, and the background queue's accounting).
    fn key(&self) -> &Arc<str>;
    /// When it was sent.
    fn sent_at(&self) -> Instant;
    /// Asks Redis once whether it was granted, making sure it never will be if it was not:
    /// `Some` it was. Asking again gives the same answer.
    fn ask(&self) -> impl Future<Output = Result<Option<Self::Found>>> + Send;
    /// Gives back a grant nobody will use.
    fn give_back(self, found: Self::Found) -> impl Future<Output = Result<()>> + Send;
}

/// Queues the settling of `attempt` on its client's background work.
pub(crate) fn settle_in_background<U: Unsettled>(attempt: U) {
    let (client, key) = (attempt.client().clone(), attempt.key().clone());
    let job: crate::background::Job = Box::new(move || Box::pin(settle_late(attempt)));
    if !client.background.push(&key, job) {
        tracing::warn!(key = %key, "an acquisition whose outcome is unknown was abandoned after its client stopped; if Redis granted it, it ends with its TTL or lease");
    }
}

/// Asks until Redis answers, within the client's settling time, and gives a grant back.
async fn settle_late<U: Unsettled>(attempt: U) -> Result<()> {
    let cfg = &attempt.client().config;
    let window = cfg.settling();
    loop {
        match attempt.ask().await {
            Ok(Some(found)) => {
                tracing::info!(key = %attempt.key(), "an acquisition nobody waits for was granted: giving it back");
                return attempt.give_back(found).await;
            }
            Ok(None) => return Ok(()),
            Err(e) if attempt.sent_at().elapsed() < window => {
                tracing::debug!(key = %attempt.key(), error = %e, "cannot settle an ambiguous acquisition yet; retrying");
                tokio::time::sleep(cfg.retry_pause()).await;
            }
            Err(e) => {
                tracing::warn!(key = %attempt.key(), error = %e, "could not learn whether an acquisition whose reply was lost took effect; if it did, what it took is not given back until its TTL or lease ends");
                return Err(e);
            }
        }
    }
}
