//! The synchronizers against real redis-server processes, in one test binary (each file is one
//! synchronizer or topology): the count-down latch, the semaphore, the permit-expirable
//! semaphore, both semaphores in a cluster, and the range every count is kept in. Interop with
//! real Redisson is in the compat matrix; their faults in tests/faults.

#[path = "../common/mod.rs"]
mod common;

mod cluster;
mod count_down_latch;
mod expirable_semaphore;
mod limits;
mod semaphore;
mod shutdown;

/// Waits until `client` is subscribed to `channels` channels.
async fn subscribed_to(client: &redisson_lock::Client, channels: usize, what: &str) {
    common::eventually(std::time::Duration::from_secs(5), what, || {
        let c = client.clone();
        async move { c.stats().channels == channels }
    })
    .await;
}
