//! A lock client over the `redis::aio::ConnectionManager` your application already has.
//!
//! ```text
//! cargo run -p redisson-lock-examples --example own_connection    # REDIS_URL, else 127.0.0.1:6379
//! ```
//!
//! The locks' commands then share your connection (its reconnects, its timeouts, its login)
//! instead of opening one of their own. Waiters still need a pub/sub connection to hear unlock
//! messages: give the builder the `redis::Client` too and it opens one (RESP3) from it; without
//! it they poll every `Config::poll_interval`.
//!
//! Use the `redis` the crate re-exports (`redisson_lock::redis`), or a `redis` dependency of the
//! same version, so the types match.

use std::time::Duration;

use redisson_lock::redis::aio::ConnectionManager;
use redisson_lock::redis::{self, AsyncCommands};
use redisson_lock::Client;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let url = std::env::var("REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379".into());

    // What the application has already: a redis::Client and a reconnecting connection.
    let redis = redis::Client::open(url.as_str())?;
    let mut app: ConnectionManager = redis.get_connection_manager().await?;

    // The lock client on that connection (a clone: it is multiplexed, clones share it), plus a
    // pub/sub connection opened from the same redis::Client.
    let client = Client::builder()
        .connection(app.clone())
        .pubsub_client(redis.clone())
        .build()
        .await?;

    let lock = client.lock("lock:example:own_connection")?;
    let first = lock.lock().await?;

    // A second acquisition waits: it subscribes to the lock's channel and wakes on the unlock
    // message, not on a timer.
    let waiter = {
        let lock = lock.clone();
        tokio::spawn(async move { lock.lock().await })
    };

    // The application's own commands on its connection, while it holds the lock (the work).
    let _: () = app.set("example:own_connection:owner", first.field()).await?;
    tokio::time::sleep(Duration::from_millis(100)).await;
    let stats = client.stats();
    println!(
        "holding; {} waiter(s) subscribed on {} channel(s)",
        stats.waiters, stats.channels
    );
    first.unlock().await?;

    let second = waiter.await??;
    println!(
        "the waiter got the lock after the unlock message: {}",
        second.field()
    );
    second.unlock().await?;

    client.shutdown().await?;
    // The connection is still the application's: the client's shutdown does not close it.
    let _: () = app.del("example:own_connection:owner").await?;
    Ok(())
}
