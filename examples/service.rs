//! A long-running service: the `Client` in the shared state, jobs handled under per-account
//! locks, work stopped when a lock is lost, and a graceful exit that shuts the client down.
//!
//! ```text
//! cargo run -p redisson-lock-examples --example service                  # until Ctrl-C or SIGTERM
//! cargo run -p redisson-lock-examples --example service -- --for 2       # stops itself after 2 s
//!     [--workers 4] [--accounts 3]                                       # REDIS_URL, else 127.0.0.1:6379
//! ```
//!
//! Each worker takes jobs ("add `amount` to account `n`") one after another. A job is a
//! read-modify-write of the account's balance with a slow step in the middle, so two jobs on
//! one account at once would lose an update: each runs under the lock `lock:account:<n>`, shared
//! with every other instance of the service (and with a Java service using
//! `redisson.getLock("lock:account:<n>")`). At the end the service checks that the balances add
//! up to what its jobs added.
//!
//! Only the standard library and tokio: the same shape fits an axum or tonic handler (keep the
//! `Client` in the router's state; it is cheap to clone).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use redisson_lock::redis::AsyncCommands;
use redisson_lock::{Client, Connection, LostReason};
use tokio::sync::watch;
use tokio::task::JoinSet;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// What every request handler and worker shares.
struct AppState {
    /// The lock client: one per process, made at start-up, shut down at exit.
    client: Client,
    /// The application's own Redis commands (the balances) on the lock client's connection.
    redis: Connection,
    accounts: u64,
    next_job: AtomicU64,
    done: AtomicU64,
    lost: AtomicU64,
    busy: AtomicU64,
}

struct Job {
    id: u64,
    account: u64,
    amount: i64,
}

enum Outcome {
    Done,
    /// Another holder kept the account's lock longer than we are willing to wait: retry later.
    Busy,
    /// The lock was lost while the job ran: the job stopped and is not acknowledged.
    Lost(LostReason),
}

fn balance_key(account: u64) -> String {
    format!("example:service:balance:{account}")
}

impl AppState {
    /// A stand-in for a queue or an incoming request.
    async fn receive(&self) -> Job {
        tokio::time::sleep(Duration::from_millis(5)).await;
        let id = self.next_job.fetch_add(1, Ordering::Relaxed);
        Job {
            id,
            account: id % self.accounts,
            amount: 10,
        }
    }

    /// Handles one job under its account's lock.
    async fn handle(&self, job: &Job) -> Result<Outcome, BoxError> {
        let lock = self.client.lock(&format!("lock:account:{}", job.account))?;
        // A request should not wait for ever: give up after a while and let it be retried.
        let Some(guard) = lock.try_lock_for(Duration::from_secs(5)).await? else {
            return Ok(Outcome::Busy);
        };
        // Watchdog mode: the hold is renewed while we work. Should it end anyway (Redis lost
        // it, a failover, an operator's force-unlock, the client shutting down), `lost()`
        // resolves and the work stops at its next await instead of going on unprotected.
        tokio::select! {
            biased;
            reason = guard.lost() => return Ok(Outcome::Lost(reason)),
            applied = self.apply(job) => applied?,
        }
        // Error::NotHeld here would mean the hold ended without our noticing in time: the work
        // may have overlapped another holder's. Report it rather than acknowledge the job.
        guard.unlock().await?;
        Ok(Outcome::Done)
    }

    /// The work: read, a slow step, write back.
    async fn apply(&self, job: &Job) -> Result<(), BoxError> {
        let mut redis = self.redis.clone();
        let key = balance_key(job.account);
        let balance: Option<i64> = redis.get(&key).await?;
        tokio::time::sleep(Duration::from_millis(10)).await; // e.g. a call to another service
        let _: () = redis.set(&key, balance.unwrap_or(0) + job.amount).await?;
        Ok(())
    }
}

/// One worker: takes jobs until told to stop; a job in progress is finished first.
async fn worker(state: Arc<AppState>, mut stop: watch::Receiver<bool>) -> Result<(), BoxError> {
    loop {
        let job = tokio::select! {
            _ = stop.wait_for(|stop| *stop) => return Ok(()),
            job = state.receive() => job,
        };
        match state.handle(&job).await? {
            Outcome::Done => state.done.fetch_add(1, Ordering::Relaxed),
            Outcome::Busy => state.busy.fetch_add(1, Ordering::Relaxed),
            Outcome::Lost(reason) => {
                eprintln!("job {}: lock lost ({reason:?}); left for a retry", job.id);
                state.lost.fetch_add(1, Ordering::Relaxed)
            }
        };
    }
}

/// Resolves on Ctrl-C, on SIGTERM (what `docker stop` and Kubernetes send), or after `run_for`.
async fn stop_signal(run_for: Option<Duration>) -> std::io::Result<&'static str> {
    let deadline = async {
        match run_for {
            Some(d) => tokio::time::sleep(d).await,
            None => std::future::pending().await,
        }
    };
    #[cfg(unix)]
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    #[cfg(unix)]
    let terminate = term.recv();
    #[cfg(not(unix))]
    let terminate = std::future::pending::<Option<()>>();
    tokio::select! {
        r = tokio::signal::ctrl_c() => r.map(|()| "Ctrl-C"),
        _ = terminate => Ok("SIGTERM"),
        () = deadline => Ok("--for elapsed"),
    }
}

struct Args {
    url: String,
    run_for: Option<Duration>,
    workers: usize,
    accounts: u64,
}

fn parse_args() -> Result<Args, String> {
    let mut a = Args {
        url: std::env::var("REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379".into()),
        run_for: None,
        workers: 4,
        accounts: 3,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let value = it.next().ok_or_else(|| format!("{flag} needs a value"))?;
        let bad = |e: &dyn std::fmt::Display| format!("{flag} {value}: {e}");
        match flag.as_str() {
            "--for" => {
                let secs: f64 = value.parse().map_err(|e| bad(&e))?;
                a.run_for = Some(Duration::try_from_secs_f64(secs).map_err(|e| bad(&e))?);
            }
            "--workers" => a.workers = value.parse().map_err(|e| bad(&e))?,
            "--accounts" => a.accounts = value.parse().map_err(|e| bad(&e))?,
            other => return Err(format!("unknown option {other}")),
        }
    }
    if a.accounts == 0 || a.workers == 0 {
        return Err("--workers and --accounts must be at least 1".into());
    }
    Ok(a)
}

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    let args = parse_args()?;
    let client = Client::connect(&args.url).await?;
    let redis = client.connection();
    let state = Arc::new(AppState {
        client,
        redis,
        accounts: args.accounts,
        next_job: AtomicU64::new(0),
        done: AtomicU64::new(0),
        lost: AtomicU64::new(0),
        busy: AtomicU64::new(0),
    });
    let mut redis = state.redis.clone();
    for account in 0..args.accounts {
        let _: () = redis.del(balance_key(account)).await?;
    }

    let (stop, stopping) = watch::channel(false);
    let mut workers = JoinSet::new();
    for _ in 0..args.workers {
        workers.spawn(worker(state.clone(), stopping.clone()));
    }
    println!(
        "serving with {} workers on {} accounts",
        args.workers, args.accounts
    );

    // Run until told to stop, or until a worker fails.
    let why = tokio::select! {
        why = stop_signal(args.run_for) => why?,
        Some(failed) = workers.join_next() => {
            failed??;
            "a worker ended"
        }
    };
    println!("stopping ({why}): finishing the jobs in progress");
    // Graceful: no new jobs; the ones in progress finish under their locks.
    let _ = stop.send(true);
    while let Some(ended) = workers.join_next().await {
        ended??;
    }
    // Then the lock client: releases anything still held and waits for its background work,
    // so this instance leaves nothing in Redis for the others to wait out.
    state.client.shutdown().await?;

    let done = state.done.load(Ordering::Relaxed);
    let mut total = 0;
    for account in 0..args.accounts {
        let balance: Option<i64> = redis.get(balance_key(account)).await?;
        total += balance.unwrap_or(0);
    }
    println!(
        "processed {done} jobs ({} busy, {} lost); balances total {total}",
        state.busy.load(Ordering::Relaxed),
        state.lost.load(Ordering::Relaxed),
    );
    if total != 10 * done as i64 {
        return Err(format!("the balances total {total}, the jobs added {}", 10 * done).into());
    }
    println!("balances add up: no update lost");
    Ok(())
}
