//! Takes a Redisson-compatible lock and holds it until killed.
//!
//! `rust-holder URL LOCK_NAME WATCHDOG_MS` prints `acquired <field>` once the lock is held (watchdog
//! mode: renewed every WATCHDOG_MS/3), then waits until killed. The matrix test SIGKILLs it to play
//! a crashed Rust service. When its stdin reaches EOF (the test is gone) it exits without unlocking.

use std::io::Write;
use std::time::Duration;

use redisson_lock::{Client, Config};

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [url, name, watchdog_ms] = args.as_slice() else {
        eprintln!("usage: rust-holder URL LOCK_NAME WATCHDOG_MS");
        std::process::exit(2);
    };
    let watchdog_ms: u64 = match watchdog_ms.parse() {
        Ok(ms) => ms,
        Err(e) => {
            eprintln!("rust-holder: bad WATCHDOG_MS `{watchdog_ms}`: {e}");
            std::process::exit(2);
        }
    };
    let client = match Client::builder()
        .url(url.as_str())
        .config(Config::default().lock_watchdog_timeout(Duration::from_millis(watchdog_ms)))
        .build()
        .await
    {
        Ok(c) => c,
        Err(e) => {
            eprintln!("rust-holder: connect {url}: {e}");
            std::process::exit(1);
        }
    };
    let lock = match client.lock(name) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("rust-holder: lock `{name}`: {e}");
            std::process::exit(1);
        }
    };
    let guard = match lock.lock().await {
        Ok(g) => g,
        Err(e) => {
            eprintln!("rust-holder: acquire `{name}`: {e}");
            std::process::exit(1);
        }
    };
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "acquired {}", guard.field());
    let _ = out.flush();
    drop(out);
    // Hold until killed. If the hold is ever lost, say so on stderr (and keep waiting). If stdin
    // reaches EOF (the test that started us is gone), exit at once without unlocking, like a
    // crash: the lock then expires after the watchdog timeout.
    let lost = guard.lost();
    let orphaned = async {
        use tokio::io::AsyncReadExt;
        let mut stdin = tokio::io::stdin();
        let mut buf = [0u8; 64];
        while matches!(stdin.read(&mut buf).await, Ok(n) if n > 0) {}
    };
    tokio::select! {
        reason = lost => {
            eprintln!("rust-holder: lost the lock: {reason}");
            std::future::pending::<()>().await;
        }
        _ = orphaned => {
            eprintln!("rust-holder: stdin closed, exiting without unlocking");
            std::process::exit(3);
        }
    }
}
