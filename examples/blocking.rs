//! The blocking API: the same locks from plain threads, no async anywhere in your code.
//!
//! ```text
//! cargo run -p redisson-lock-examples --example blocking        # REDIS_URL, else 127.0.0.1:6379
//! ```
//!
//! Four threads add to one balance, each under the lock. `redisson_lock::blocking::Client`
//! brings its own small runtime for the watchdog and pub/sub. Its owner is the calling OS
//! thread, as in Java: a nested `lock()` on one thread re-enters. Do not call it from async
//! code (it panics there, naming the fix); use the async `Client` there, or `spawn_blocking`.

use std::thread;
use std::time::Duration;

use redisson_lock::blocking::Client;
use redisson_lock::redis::Commands;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

const THREADS: i64 = 4;
const ROUNDS: i64 = 5;

fn main() -> Result<(), BoxError> {
    let url = std::env::var("REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379".into());
    let client = Client::connect(&url)?;
    // A plain redis-rs connection for the application's data (the lock client has its own).
    let redis = redisson_lock::redis::Client::open(url.as_str())?;
    let balance = "example:blocking:balance";
    redis.get_connection()?.set::<_, _, ()>(balance, 0)?;

    thread::scope(|s| -> Result<(), BoxError> {
        let workers: Vec<_> = (0..THREADS)
            .map(|t| {
                let (client, redis) = (&client, &redis);
                s.spawn(move || -> Result<(), BoxError> {
                    let lock = client.lock("lock:example:blocking")?;
                    let mut conn = redis.get_connection()?;
                    for _ in 0..ROUNDS {
                        // Blocks this thread until the lock is ours (watchdog mode).
                        let guard = lock.lock()?;
                        // A read-modify-write that would lose updates without the lock.
                        let n: i64 = conn.get(balance)?;
                        thread::sleep(Duration::from_millis(5));
                        conn.set::<_, _, ()>(balance, n + 10)?;
                        guard.unlock()?;
                    }
                    // `run` does the same around a closure: lock, call, unlock. Inside it the
                    // thread holds the lock, so its own lock() re-enters instead of waiting.
                    let holds = lock.run(|| -> redisson_lock::Result<u64> {
                        let again = lock.lock()?;
                        let holds = lock.hold_count()?;
                        again.unlock()?;
                        Ok(holds)
                    })??;
                    println!("thread {t}: done; re-entered inside run: {holds} holds");
                    Ok(())
                })
            })
            .collect();
        for w in workers {
            w.join().map_err(|_| "a worker thread panicked")??;
        }
        Ok(())
    })?;

    let total: i64 = redis.get_connection()?.get(balance)?;
    println!("balance = {total} (expected {})", THREADS * ROUNDS * 10);
    if total != THREADS * ROUNDS * 10 {
        return Err("lost updates: the lock did not exclude".into());
    }
    // Releases anything still held and stops the client's runtime (dropping the last handle
    // does it too, but then an error has nowhere to go).
    client.shutdown()?;
    Ok(())
}
