//! What the crate logs, and how to see it with `tracing-subscriber`.
//!
//! ```text
//! cargo run -p redisson-lock-examples --example tracing          # REDIS_URL, else 127.0.0.1:6379
//! RUST_LOG=redisson_lock=trace cargo run -p redisson-lock-examples --example tracing
//! ```
//!
//! The crate emits through the [`tracing`] facade under its module paths, so the target
//! `redisson_lock` (a prefix of `redisson_lock::core`, `redisson_lock::watchdog`, ...) selects
//! all of it. What it emits:
//!
//! * spans, at DEBUG: `acquire` with fields `key`, `kind` (`lock`, `fair`, `fenced`, `read`,
//!   `write`, ...) and `field` (the owner's hash field `<client id>:<owner id>`, recorded once
//!   known), and `release` with `key`, `field` (and `on_drop = true` for the background release
//!   of a dropped guard);
//! * events, each with the lock's `key` and mostly its `field`: at DEBUG `acquired` (`kind`,
//!   `lease_ms`, `watchdog`), `released` (`outcome`), retries, and the client's start
//!   (`lock client ready`, `client_id`); at TRACE every renewal (`renewed`); at INFO the client's
//!   shutdown (`client_id`); at WARN what needs attention, with an `error` where there is one
//!   (`lock lost: renewal found the owner's field gone`, `lock renewal failed; will retry soon`,
//!   `shutdown left locks unreleased`).
//!
//! The `field` tells two holders of one lock apart; its first half is the client's id
//! (`Client::id`), as in the hash field a Java (Redisson) client writes. This example's output
//! (ids shortened):
//!
//! ```text
//! DEBUG redisson_lock::connect: lock client ready client_id=4b297897-... mode=Classic
//! DEBUG job{order=42}:acquire{key=lock:order:42 kind="lock" field="4b297897-...:281474976710658"}: redisson_lock::core: acquired key=lock:order:42 field=4b297897-...:281474976710658 kind="lock" lease_ms=30000 watchdog=true
//!  INFO job{order=42}: tracing: charging the order under the lock
//! DEBUG redisson_lock::loss_watch: loss detection: tracking on; reading every hold
//! DEBUG job{order=42}:release{key=lock:order:42 field=4b297897-...:281474976710658}: redisson_lock::core::release: released key=lock:order:42 field=4b297897-...:281474976710658 kind="lock" outcome=Released
//!  INFO redisson_lock::client: shutting down: releasing every hold client_id=4b297897-... holds=0 background=0
//!  INFO redisson_lock::client: shut down: nothing left in Redis client_id=4b297897-...
//! ```
//!
//! In production, JSON lines (`tracing_subscriber::fmt().json()`, feature `json`) keep these
//! fields as fields; `RUST_LOG=info,redisson_lock=warn` keeps only what needs attention.

use std::io::IsTerminal;
use std::time::Duration;

use redisson_lock::Client;
use tracing::Instrument;
use tracing_subscriber::EnvFilter;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // RUST_LOG wins when set; else our own INFO and the lock crate's DEBUG.
    let filter =
        EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info,redisson_lock=debug"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(std::io::stdout().is_terminal())
        // .with_span_events(FmtSpan::CLOSE) would add a line as each span closes, with its time
        .init();

    let url = std::env::var("REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379".into());
    let client = Client::connect(&url).await?;
    let lock = client.lock("lock:order:42")?;

    // The application's span: the crate's spans nest in it, so a log line says which job
    // took which lock.
    async {
        let guard = lock.lock().await?;
        tracing::info!("charging the order under the lock");
        tokio::time::sleep(Duration::from_millis(50)).await;
        guard.unlock().await?;
        Ok::<_, redisson_lock::Error>(())
    }
    .instrument(tracing::info_span!("job", order = 42))
    .await?;

    client.shutdown().await?;
    Ok(())
}
