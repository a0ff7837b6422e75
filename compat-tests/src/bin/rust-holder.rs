//! Takes a Redisson-compatible lock and holds it until killed.
//!
//! `rust-holder URL LOCK_NAME WATCHDOG_MS` prints `acquired <field>` once the lock is held (watchdog
//! mode: renewed every WATCHDOG_MS/3), then waits forever. The matrix test SIGKILLs it to play a
//! crashed Rust service.

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
    // Hold until killed; if the hold is ever lost, say so on stderr (and keep waiting).
    let reason = guard.lost().await;
    eprintln!("rust-holder: lost the lock: {reason}");
    std::future::pending::<()>().await;
}
