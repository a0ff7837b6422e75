//! A read-write lock: write, then downgrade to read without letting a writer in between.
//!
//! ```text
//! cargo run -p redisson-lock-examples --example rw_downgrade     # REDIS_URL, else 127.0.0.1:6379
//! ```
//!
//! Redisson's `RReadWriteLock` (`redisson.getReadWriteLock(name)`): readers share, a writer
//! excludes everyone. A writer that has updated a value and wants to go on reading it, while
//! letting other readers in, downgrades: `WriteGuard::downgrade` takes the read lock (allowed to
//! the writer) and only then releases the write hold, so no other writer can change the value
//! in between. (The reverse, read to write, is refused with `Error::WouldDeadlock`: two readers
//! upgrading would wait for each other for ever.)

use std::time::Duration;

use redisson_lock::redis::AsyncCommands;
use redisson_lock::Client;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let url = std::env::var("REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379".into());
    let client = Client::connect(&url).await?;
    let mut conn = client.connection();
    let rw = client.read_write_lock("lock:example:catalog")?;
    let price_key = "example:catalog:price";

    // 1. Write: nobody else reads or writes while we hold this.
    let write = rw.write_lock().lock().await?;
    let _: () = conn.set(price_key, 1_250).await?;
    println!("wrote the price under the write lock");

    // 2. Downgrade: now a read hold of the same owner; the write hold is gone.
    let read = write.downgrade().await?;
    println!(
        "downgraded: read-locked = {}, write-locked = {}",
        rw.read_lock().is_locked().await?,
        rw.write_lock().is_locked().await?
    );

    // 3. Other readers get in at once (each acquisition has its own owner)...
    let other_reader = rw.read_lock().try_lock().await?.ok_or("a reader was kept out")?;
    // ... but a writer does not, until every read hold is released.
    let writer = rw.write_lock().try_lock_for(Duration::from_millis(200)).await?;
    println!(
        "another reader got in: {}; a writer got in: {}",
        other_reader.is_held(),
        writer.is_some()
    );
    if writer.is_some() {
        return Err("a writer got in while the lock was read-locked".into());
    }

    // 4. Still reading what we wrote: no writer could have changed it.
    let price: i64 = conn.get(price_key).await?;
    println!("the price is still {price}");

    other_reader.unlock().await?;
    read.unlock().await?;
    // With every read hold released, a writer gets in again.
    let writer = rw.write_lock().lock().await?;
    println!("a writer got in after the readers left");
    writer.unlock().await?;

    client.shutdown().await?;
    Ok(())
}
