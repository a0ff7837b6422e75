//! A demo worker: takes one lock repeatedly and increments a shared counter under it.
//!
//! ```text
//! cargo run --example demo_worker -- --url redis://127.0.0.1:6379 --label rust-1 \
//!     [--lock demo:lock] [--key demo:counter] [--rounds 30] [--work-ms 120] [--rest-ms 30]
//! ```
//!
//! Each round: `lock()` (watchdog mode), `GET key`, sleep `work-ms` (the "work"), `SET key n+1`,
//! `RPUSH key:intervals rust:<label>:<start µs>:<end µs>`, `unlock()`, then rest `rest-ms` to twice that.
//! That is the same round as the Redisson harness's `counter` command, so Rust and Java workers
//! can share the lock and the counter; a lost update or two overlapping intervals would show a
//! broken lock. The worker also records its label under `demo:workers` (client id → label) and
//! its state (`waiting`, `holding`, `resting`, `done`) under `demo:state`, for `demo_view`.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use redis::AsyncCommands;
use redisson_lock::Client;

struct Args {
    url: String,
    label: String,
    lock: String,
    key: String,
    rounds: u64,
    work: Duration,
    rest: Duration,
}

fn parse_args() -> Result<Args, String> {
    let mut a = Args {
        url: std::env::var("REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379".into()),
        label: format!("rust-{}", std::process::id()),
        lock: "demo:lock".into(),
        key: "demo:counter".into(),
        rounds: 30,
        work: Duration::from_millis(120),
        rest: Duration::from_millis(30),
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let value = it.next().ok_or_else(|| format!("{flag} needs a value"))?;
        let ms = |v: &str| {
            v.parse::<u64>()
                .map(Duration::from_millis)
                .map_err(|e| format!("{flag}: {e}"))
        };
        match flag.as_str() {
            "--url" => a.url = value,
            "--label" => a.label = value,
            "--lock" => a.lock = value,
            "--key" => a.key = value,
            "--rounds" => a.rounds = value.parse().map_err(|e| format!("--rounds: {e}"))?,
            "--work-ms" => a.work = ms(&value)?,
            "--rest-ms" => a.rest = ms(&value)?,
            other => return Err(format!("unknown option {other}")),
        }
    }
    Ok(a)
}

fn micros() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_micros())
        .unwrap_or(0)
}

async fn run(a: Args) -> Result<(), Box<dyn std::error::Error>> {
    let client = Client::connect(&a.url).await?;
    let mut conn = client.connection();
    let lock = client.lock(&a.lock)?;
    let _: () = conn.hset("demo:workers", client.id(), &a.label).await?;
    let intervals = format!("{}:intervals", a.key);
    for _ in 0..a.rounds {
        let _: () = conn.hset("demo:state", &a.label, "waiting").await?;
        let guard = lock.lock().await?;
        let start = micros();
        let _: () = conn.hset("demo:state", &a.label, "holding").await?;
        let n: Option<i64> = conn.get(&a.key).await?;
        tokio::time::sleep(a.work).await;
        let _: () = conn.set(&a.key, n.unwrap_or(0) + 1).await?;
        let end = micros();
        let _: () = conn
            .rpush(&intervals, format!("rust:{}:{start}:{end}", a.label))
            .await?;
        guard.unlock().await?;
        let _: () = conn.hset("demo:state", &a.label, "resting").await?;
        // Rest a little (with jitter) before the next round, so the others get their turns.
        let rest_ms = a.rest.as_millis() as u64;
        tokio::time::sleep(Duration::from_millis(rest_ms + rand::random_range(0..=rest_ms))).await;
    }
    let _: () = conn.hset("demo:state", &a.label, "done").await?;
    Ok(())
}

#[tokio::main]
async fn main() {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("demo_worker: {e}");
            std::process::exit(1);
        }
    };
    let label = args.label.clone();
    if let Err(e) = run(args).await {
        eprintln!("demo_worker {label}: {e}");
        std::process::exit(1);
    }
}
