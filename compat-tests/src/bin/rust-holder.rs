//! Takes a Redisson-compatible lock, or expirable permits, and holds them until killed.
//!
//! `rust-holder URL LOCK_NAME WATCHDOG_MS` prints `acquired <field>` once the lock is held (watchdog
//! mode: renewed every WATCHDOG_MS/3), then waits until killed (scenario 7).
//!
//! `rust-holder --expirable-permits URL NAME LEASE_MS COUNT` takes COUNT permits of the
//! permit-expirable semaphore NAME, each with a lease of LEASE_MS (`acquire_many`; the permits
//! must have been set up), prints `acquired <id> <id>…`, then waits until killed (scenario 57).
//!
//! The matrix test SIGKILLs it to play a crashed Rust service. When its stdin reaches EOF (the
//! test is gone) it exits at once without unlocking or releasing, like a crash: a lock then
//! expires after the watchdog timeout, permits when their leases end.

use std::io::Write;
use std::time::Duration;

use redisson_lock::{Client, Config};

const USAGE: &str =
    "usage: rust-holder URL LOCK_NAME WATCHDOG_MS | rust-holder --expirable-permits URL NAME LEASE_MS COUNT";

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.as_slice() {
        [mode, url, name, lease_ms, count] if mode == "--expirable-permits" => {
            hold_permits(url, name, number("LEASE_MS", lease_ms), number("COUNT", count)).await
        }
        [url, name, watchdog_ms] if !url.starts_with("--") => {
            hold_lock(url, name, number("WATCHDOG_MS", watchdog_ms)).await
        }
        _ => fail(2, USAGE),
    }
}

/// Prints `msg` on stderr and exits with `code`.
fn fail(code: i32, msg: &str) -> ! {
    eprintln!("{msg}");
    std::process::exit(code);
}

fn number(what: &str, arg: &str) -> u64 {
    arg.parse()
        .unwrap_or_else(|e| fail(2, &format!("rust-holder: bad {what} `{arg}`: {e}")))
}

async fn connect(url: &str, config: Config) -> Client {
    Client::builder()
        .url(url)
        .config(config)
        .build()
        .await
        .unwrap_or_else(|e| fail(1, &format!("rust-holder: connect {url}: {e}")))
}

/// Tells the test what is held: one line on stdout.
fn report(line: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

/// Returns when stdin reaches EOF (the test that started us is gone).
async fn orphaned() {
    use tokio::io::AsyncReadExt;
    let mut stdin = tokio::io::stdin();
    let mut buf = [0u8; 64];
    while matches!(stdin.read(&mut buf).await, Ok(n) if n > 0) {}
}

async fn hold_lock(url: &str, name: &str, watchdog_ms: u64) {
    let config = Config::default().with_lock_watchdog_timeout(Duration::from_millis(watchdog_ms));
    let client = connect(url, config).await;
    let lock = client
        .lock(name)
        .unwrap_or_else(|e| fail(1, &format!("rust-holder: lock `{name}`: {e}")));
    let guard = lock
        .lock()
        .await
        .unwrap_or_else(|e| fail(1, &format!("rust-holder: acquire `{name}`: {e}")));
    report(&format!("acquired {}", guard.field()));
    // Hold until killed. If the hold is ever lost, say so on stderr (and keep waiting).
    let lost = guard.lost();
    tokio::select! {
        reason = lost => {
            eprintln!("rust-holder: lost the lock: {reason}");
            std::future::pending::<()>().await;
        }
        _ = orphaned() => fail(3, "rust-holder: stdin closed, exiting without unlocking"),
    }
}

async fn hold_permits(url: &str, name: &str, lease_ms: u64, count: u64) {
    let client = connect(url, Config::default()).await;
    let sem = client
        .permit_expirable_semaphore(name)
        .unwrap_or_else(|e| fail(1, &format!("rust-holder: semaphore `{name}`: {e}")));
    let ids = sem
        .acquire_many(count, Some(Duration::from_millis(lease_ms)))
        .await
        .map(|g| g.forget())
        .unwrap_or_else(|e| fail(1, &format!("rust-holder: acquire {count} of `{name}`: {e}")));
    let ids: Vec<String> = ids.iter().map(ToString::to_string).collect();
    report(&format!("acquired {}", ids.join(" ")));
    // Hold until killed: the permits come back when their leases end.
    orphaned().await;
    fail(3, "rust-holder: stdin closed, exiting without releasing");
}
