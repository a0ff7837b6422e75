//! A demo worker: takes one lock repeatedly and increments a shared counter under it.
//!
//! ```text
//! cargo run -p redisson-lock-examples --example demo_worker -- --url redis://127.0.0.1:6379 --label rust-1 \
//!     [--lock demo:lock] [--key demo:counter] [--rounds 30] [--work-ms 120] [--rest-ms 30]
//! ```
//!
//! Each round: `lock()` (watchdog mode), `GET key`, sleep `work-ms` (the "work"), `SET key n+1`,
//! `RPUSH key:intervals rust:<label>:<start µs>:<end µs>`, `unlock()`, then rest `rest-ms` to twice
//! that. That is the same round as the Redisson harness's `counter` command, so Rust and Java workers
//! can share the lock and the counter; a lost update or two overlapping intervals would show a
//! broken lock. The worker also records its label under `demo:workers` (client id → label) and
//! its state (`waiting`, `holding`, `resting`, `done`) under `demo:state`, for `demo_view`.
//! After the last round it calls `client.shutdown()`, as a service does before it exits.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use redisson_lock::redis::{self, AsyncCommands};
use redisson_lock::{Client, Connection};

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

/// What `demo_view` reads: this worker's label, its state, and the interval of every hold.
struct Board {
    conn: Connection,
    label: String,
    intervals: String,
    rest: Duration,
}

impl Board {
    async fn join(client: &Client, a: &Args) -> redis::RedisResult<Board> {
        let mut conn = client.connection();
        let _: () = conn.hset("demo:workers", client.id(), &a.label).await?;
        Ok(Board {
            conn,
            label: a.label.clone(),
            intervals: format!("{}:intervals", a.key),
            rest: a.rest,
        })
    }

    /// Publishes this worker's state; returns when (µs since the epoch), for a hold's interval.
    async fn set_state(&mut self, state: &str) -> redis::RedisResult<u128> {
        let _: () = self.conn.hset("demo:state", &self.label, state).await?;
        Ok(micros())
    }

    /// Appends the hold that began at `start` and ends now (still under the lock).
    async fn record_hold(&mut self, start: u128) -> redis::RedisResult<()> {
        let end = micros();
        let interval = format!("rust:{}:{start}:{end}", self.label);
        self.conn.rpush(&self.intervals, interval).await
    }

    /// Rests `rest` to twice that (jitter), so the other workers get their turns.
    async fn rest(&mut self) -> redis::RedisResult<()> {
        self.set_state("resting").await?;
        let ms = self.rest.as_millis() as u64;
        tokio::time::sleep(Duration::from_millis(ms + fastrand::u64(0..=ms))).await;
        Ok(())
    }
}

async fn run(a: Args) -> Result<(), Box<dyn std::error::Error>> {
    // demo: the work begins. scripts/demo ends by printing the lines from here to "the work
    // ends", less those of `board` (what demo_view reads).
    let client = Client::connect(&a.url).await?;
    let lock = client.lock(&a.lock)?; // Java: redisson.getLock("demo:lock")
    let mut conn = client.connection(); // for the application's own commands
    let mut board = Board::join(&client, &a).await?;
    for _ in 0..a.rounds {
        board.set_state("waiting").await?;
        let guard = lock.lock().await?; // waits its turn; the watchdog renews the hold
        let held_from = board.set_state("holding").await?;
        let n: Option<i64> = conn.get(&a.key).await?;
        tokio::time::sleep(a.work).await; // the work: read, think, write, under the lock
        let _: () = conn.set(&a.key, n.unwrap_or(0) + 1).await?;
        board.record_hold(held_from).await?;
        guard.unlock().await?; // the next waiter, Rust or Java, gets in
        board.rest().await?;
    }
    board.set_state("done").await?;
    client.shutdown().await?; // releases anything left; nothing of this client stays in Redis
                              // demo: the work ends.
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
