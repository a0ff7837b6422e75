//! Start here: connect, take a lock, work under it, unlock, shut down.
//!
//! ```text
//! cargo run -p redisson-lock-examples --example quickstart
//! REDIS_URL=redis://:secret@10.0.0.7:6379/2 cargo run -p redisson-lock-examples --example quickstart
//! ```
//!
//! The lock is Redisson's `RLock`: a Java service calling `redisson.getLock("lock:order:42")`
//! on the same Redis contends for the very same key.

use std::time::Duration;

use redisson_lock::Client;

#[tokio::main]
async fn main() -> Result<(), redisson_lock::Error> {
    let url = std::env::var("REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379".into());

    // One client per process: it owns the connection, the pub/sub connection waiters listen on,
    // and the watchdog. Clone it freely (clones share everything).
    let client = Client::connect(&url).await?;

    // A handle sends nothing yet. Java: `RLock lock = redisson.getLock("lock:order:42");`
    let lock = client.lock("lock:order:42")?;

    // Waits as long as it takes. Without a lease the lock is in watchdog mode: its key lives 30 s
    // and the client renews it every 10 s while `guard` lives, so slow work never loses it.
    let guard = lock.lock().await?;
    println!("holding {} as {}", guard.key(), guard.field());

    // The work. Anyone else calling lock() on this name, in this process or another, in Rust
    // or Java, waits until we unlock.
    tokio::time::sleep(Duration::from_millis(200)).await;

    // Releasing wakes the next waiter. Dropping the guard would release too (in the background),
    // but unlock() says whether the hold was still ours: Error::NotHeld if it had been lost.
    guard.unlock().await?;
    println!("unlocked");

    // Before the process exits: stops waiters, releases whatever this client still holds and
    // waits for its background work, so nothing of it is left in Redis to expire by TTL.
    client.shutdown().await?;
    Ok(())
}
