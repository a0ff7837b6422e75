//! **A lock alone does not stop a double charge; the database refusing the stale writer does.**
//!
//! ```text
//! scripts/demo fenced_write     # on a throwaway redis-server of its own
//! cargo run -p redisson-lock-examples --example fenced_write --features fenced_write -- \
//!     --url redis://127.0.0.1:6379/ [--lease-ms 1000] [--stall-ms 2000]
//! ```
//!
//! Two workers, A and B (two clients, as two services would be), charge the same order, guarded
//! by an `RFencedLock` (Java: `redisson.getFencedLock(name)`), in a real SQLite database
//! (`orders.rs`: the schema, the statements, and the invariant they keep):
//!
//! 1. A takes the lock with a lease (1 s: no watchdog renews it) and its fencing token, and starts
//!    on the order: pending.
//! 2. A calls the payment provider and stalls there for 2 s, longer than its lease: its task
//!    sleeps and nothing of A runs — as in a GC pause, a stopped VM, or a call stuck on the
//!    network. Its lease runs out in Redis.
//! 3. B takes the lock with the next token, finds the order still pending, and charges it.
//! 4. A wakes up and charges too. Its guard's `lost()` fired while it slept, but A was not running
//!    to see it — and checking `is_held()` right before the write would not close the gap: the
//!    pause can come between the check and the write. Only the database, which sees both writes
//!    one after the other, can refuse the stale one.
//!
//! **The invariant: an order is charged at most once**, whatever the lock did (`orders.rs` keeps
//! it). The scenario runs three times at once, on three orders, side by side: without a guard (the
//! order is charged twice), with the fencing token checked by the database (A's write is refused:
//! the order has seen B's newer token), and with an idempotency key (A's payment is refused: the
//! order's charge was written already). The example exits with an error if a guarded order was
//! charged more than once.
//!
//! The lock names are `example:fenced_write:order:<1|2|3>`; their token counters
//! (`redisson_lock_token:{…}`) stay in Redis, as Redisson's do. The database is a file in the
//! temporary directory, removed at the end.

mod orders;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use orders::{Begin, Charge, Guard, Orders, Payment, Refusal};
use redisson_lock::{Client, LeaseState};

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The price of every order, in cents.
const AMOUNT_CENTS: i64 = 4_200;

struct Args {
    url: String,
    lease: Duration,
    stall: Duration,
}

fn parse_args() -> Result<Args, String> {
    let mut a = Args {
        url: std::env::var("REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379/".into()),
        lease: Duration::from_millis(1_000),
        stall: Duration::from_millis(2_000),
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
            "--lease-ms" => a.lease = ms(&value)?,
            "--stall-ms" => a.stall = ms(&value)?,
            other => return Err(format!("unknown option {other}")),
        }
    }
    if a.stall <= a.lease {
        return Err("--stall-ms must be longer than --lease-ms: the stall outlives the lease".into());
    }
    Ok(a)
}

/// What happened to one order.
struct Story {
    guard: Guard,
    a_token: u64,
    a_begin: Begin,
    b_token: u64,
    /// How long B waited for the lock (until A's lease ran out).
    b_waited: Duration,
    b_begin: Begin,
    b_charge: Option<Charge>,
    /// A's hold as its guard saw it when A woke up.
    a_state: LeaseState,
    a_charge: Option<Charge>,
    a_unlock: String,
    payments: Vec<Payment>,
}

/// Worker A: takes the lock, starts on the order, stalls past its lease, then charges.
async fn worker_a(
    client: &Client,
    db: &Path,
    order: i64,
    guard: Guard,
    a: &Args,
    holding: tokio::sync::oneshot::Sender<()>,
) -> Result<(u64, Begin, LeaseState, Option<Charge>, String), BoxError> {
    let lock = client.fenced_lock(&lock_name(order))?;
    let (token, held) = lock.lock_with_lease_and_get_token(a.lease).await?;
    // (SQLite calls are short and local here; a service would use an async driver or
    // spawn_blocking)
    let mut orders = Orders::open(db)?;
    let begin = orders.begin(order, token, guard)?;
    let _ = holding.send(());
    // The payment provider call, and the stall: A's task does not run for `stall`, longer than
    // its lease. Nothing here is mocked: the lease runs out in Redis while A sleeps.
    tokio::time::sleep(a.stall).await;
    // A wakes up. Its guard knows the hold is gone (`lost()` resolved meanwhile), but A was
    // paused: it goes on to write, as code that was paused one line later would.
    let state = held.state();
    let charge = match begin {
        Begin::Pending { amount_cents } => Some(orders.charge(order, amount_cents, token, "A", guard)?),
        Begin::Paid | Begin::Stale { .. } => None,
    };
    let unlock = match held.unlock().await {
        Ok(u) => format!("{u:?}"),
        Err(redisson_lock::Error::NotHeld { .. }) => "Error::NotHeld".to_owned(),
        Err(e) => return Err(e.into()),
    };
    Ok((token, begin, state, charge, unlock))
}

/// Worker B: once A holds the lock, waits for it (until A's lease runs out), then charges.
async fn worker_b(
    client: &Client,
    db: &Path,
    order: i64,
    guard: Guard,
    a_holds: tokio::sync::oneshot::Receiver<()>,
) -> Result<(u64, Duration, Begin, Option<Charge>), BoxError> {
    a_holds.await?;
    let lock = client.fenced_lock(&lock_name(order))?;
    let start = Instant::now();
    // watchdog mode: B's hold is renewed while it works (A's lease was the exception)
    let (token, held) = lock.lock_and_get_token().await?;
    let waited = start.elapsed();
    let mut orders = Orders::open(db)?;
    let begin = orders.begin(order, token, guard)?;
    let charge = match begin {
        Begin::Pending { amount_cents } => Some(orders.charge(order, amount_cents, token, "B", guard)?),
        Begin::Paid | Begin::Stale { .. } => None,
    };
    held.unlock().await?;
    Ok((token, waited, begin, charge))
}

fn lock_name(order: i64) -> String {
    format!("example:fenced_write:order:{order}")
}

/// One order, charged by A and B under `guard`.
async fn run_order(
    clients: &[Client; 2],
    db: &Path,
    order: i64,
    guard: Guard,
    a: &Args,
) -> Result<Story, BoxError> {
    Orders::open(db)?.add_order(order, AMOUNT_CENTS)?;
    let (holding, a_holds) = tokio::sync::oneshot::channel();
    let (ra, rb) = tokio::join!(
        worker_a(&clients[0], db, order, guard, a, holding),
        worker_b(&clients[1], db, order, guard, a_holds)
    );
    let (a_token, a_begin, a_state, a_charge, a_unlock) = ra?;
    let (b_token, b_waited, b_begin, b_charge) = rb?;
    Ok(Story {
        guard,
        a_token,
        a_begin,
        b_token,
        b_waited,
        b_begin,
        b_charge,
        a_state,
        a_charge,
        a_unlock,
        payments: Orders::open(db)?.payments(order)?,
    })
}

fn money(cents: i64) -> String {
    format!("{}.{:02}", cents / 100, cents % 100)
}

fn begin_text(b: &Begin, guard: Guard, token: u64) -> String {
    match (b, guard) {
        (Begin::Pending { amount_cents }, Guard::Fence) => {
            format!("pending {}, fence := {token}", money(*amount_cents))
        }
        (Begin::Pending { amount_cents }, _) => format!("pending {}", money(*amount_cents)),
        (Begin::Paid, _) => "paid already".into(),
        (Begin::Stale { fence }, _) => format!("stale: fence {fence}"),
    }
}

fn charge_text(c: &Option<Charge>) -> String {
    match c {
        None => "nothing to charge".into(),
        Some(Charge::Written) => "WRITTEN".into(),
        Some(Charge::Refused(Refusal::StaleToken { token, fence })) => {
            format!("refused: fence {fence} > token {token}")
        }
        Some(Charge::Refused(Refusal::DuplicateRequest { request_id })) => {
            format!("refused: {request_id} exists")
        }
    }
}

fn payments_text(p: &[Payment]) -> String {
    let total: i64 = p.iter().map(|p| p.amount_cents).sum();
    match p {
        [one] => format!("1: {} by {} (token {})", money(total), one.worker, one.token),
        _ => format!(
            "{}: {} for a {} order",
            p.len(),
            money(total),
            money(AMOUNT_CENTS)
        ),
    }
}

/// One story as a column of the table, a cell per row of [`print_table`].
fn column(s: &Story) -> [String; 11] {
    let head = match s.guard {
        Guard::Unguarded => "no guard",
        Guard::Fence => "fencing token",
        Guard::IdempotencyKey => "idempotency key",
    };
    let a_guard = match s.a_state {
        LeaseState::Lost(reason) => format!("lost: {reason}"),
        other => format!("{other:?}"),
    };
    [
        head.to_owned(),
        format!("token {}", s.a_token),
        begin_text(&s.a_begin, s.guard, s.a_token),
        "...".to_owned(),
        format!("token {} after {} ms", s.b_token, s.b_waited.as_millis()),
        begin_text(&s.b_begin, s.guard, s.b_token),
        charge_text(&s.b_charge),
        a_guard,
        charge_text(&s.a_charge),
        s.a_unlock.clone(),
        payments_text(&s.payments),
    ]
}

fn print_table(stories: &[Story], a: &Args) {
    let stall = format!("A stalls {} ms", a.stall.as_millis());
    let labels = [
        "",
        "A takes the lock",
        "A starts on the order",
        &stall,
        "B takes the lock",
        "B starts on the order",
        "B charges",
        "A wakes; its guard",
        "A charges",
        "A unlocks",
        "payments of the order",
    ];
    println!(
        "\nEach order n: A holds the lock example:fenced_write:order:<n> with a {} ms lease and\n\
         stalls {} ms; B waits for the lock.\n",
        a.lease.as_millis(),
        a.stall.as_millis()
    );
    let columns: Vec<[String; 11]> = stories.iter().map(column).collect();
    for (row, label) in labels.iter().enumerate() {
        let mut line = format!("{label:<23}");
        for c in &columns {
            line.push_str(&format!(" | {:<29}", c[row]));
        }
        println!("{}", line.trim_end());
    }
}

async fn run(a: Args) -> Result<bool, BoxError> {
    // two clients: A's service and B's service
    let clients = [Client::connect(&a.url).await?, Client::connect(&a.url).await?];
    let db: PathBuf = std::env::temp_dir().join(format!("fenced_write-{}.sqlite", std::process::id()));
    let _ = std::fs::remove_file(&db);
    let result = tokio::join!(
        run_order(&clients, &db, 1, Guard::Unguarded, &a),
        run_order(&clients, &db, 2, Guard::Fence, &a),
        run_order(&clients, &db, 3, Guard::IdempotencyKey, &a),
    );
    let highest_fence = Orders::open(&db)?.highest_fence()?;
    let _ = std::fs::remove_file(&db);
    for c in clients {
        c.shutdown().await?;
    }
    let stories = [result.0?, result.1?, result.2?];
    print_table(&stories, &a);
    println!();
    let mut held = true;
    for s in &stories {
        let n = s.payments.len();
        let (label, verdict) = match (s.guard, n) {
            (Guard::Unguarded, 2) => (
                "no guard:",
                "charged TWICE. Both writes landed; the lock did not stop A, paused past its lease.",
            ),
            (Guard::Unguarded, _) => ("no guard:", "charged once this time (A did not outlive B)."),
            (Guard::Fence, 1) => (
                "fencing token:",
                "charged once. B's claim raised the order's fence past A's token: A refused.",
            ),
            (Guard::IdempotencyKey, 1) => (
                "idempotency key:",
                "charged once. The request id names the operation: A's second payment refused.",
            ),
            (_, _) => {
                held = false;
                ("BROKEN:", "a guarded order was charged more than once.")
            }
        };
        println!("{label:<16} {verdict}");
    }
    println!(
        "\nFences work while tokens only grow. Should Redis lose the counters (a restart without\n\
         persistence, a failover to a replica that missed the last INCR), tokens start again below\n\
         the database's highest fence ({highest_fence} here) and every new holder is refused (safe, but\n\
         stuck) until `lock.raise_token_to({highest_fence})` lifts the counter past it."
    );
    Ok(held)
}

#[tokio::main]
async fn main() {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("fenced_write: {e}");
            std::process::exit(2);
        }
    };
    match run(args).await {
        Ok(true) => {}
        Ok(false) => std::process::exit(1),
        Err(e) => {
            eprintln!("fenced_write: {e}");
            std::process::exit(1);
        }
    }
}
