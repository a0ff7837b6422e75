//! The interop matrix: every scenario × every Redisson version × both directions, against real
//! redis-server processes and real Redisson (the JVM harness). Writes `compat-tests/RESULTS.md`
//! and prints `compat: N passed, M failed`; exits non-zero when anything failed.
//!
//! Env: `COMPAT_VERSIONS` (default `4.7.0 3.52.0 3.24.3 3.17.7`), `COMPAT_LANES` (versions run at
//! the same time, default 2; 1 = one after another), `COMPAT_SCENARIOS` (e.g. `1,2,8`;
//! a filtered run does not rewrite RESULTS.md), `CI=true` (a missing JDK/Maven/redis-server fails).
//! `cargo test -p redisson-lock-compat-tests --test matrix -- --self-check` checks the report
//! logic only (no Redis, no JVM); every full run does that first too.
//!
//! Layout (`tests/matrix/`):
//!
//! | module | what |
//! | --- | --- |
//! | [`kinds`] | the lock kinds, their scenarios, run order, directions; how to add a kind |
//! | [`rlock`] | RLock scenarios 1–9 (9: nothing left behind, runs last) |
//! | [`rwlock`] | read-write lock scenarios 10–15 and their assertions |
//! | [`fenced`] | fenced lock scenarios 16–19 (tokens across languages) and the table entry of 58 |
//! | [`fenced_write`] | fenced lock scenario 58: a holder paused past its lease, the next holder's write, and the database (SQLite, `orders`) refusing the stale one, across languages |
//! | [`spin`] | spin lock scenarios 20–23 (hand-over by polling, nothing published) |
//! | [`non_reentrant`] | non-reentrant lock scenarios 24–26 (re-acquire refused in both languages) |
//! | [`fair`] | fair lock scenarios 27–30 (FIFO across languages, leaving the queue, head-only wake-up) and the queue helpers |
//! | [`non_reentrant_fair`] | non-reentrant fair lock scenarios 31–34 (re-acquire refused, nothing queued; 27, 29, 30 on this kind) |
//! | [`multi`] | multi-lock scenarios 35–37 (`RedissonMultiLock` vs `Client::multi_lock` over the same three names) |
//! | [`cluster`] | scenarios 38–42, 71 and 72 in a Redis Cluster (3 masters + 3 replicas): RLock, fair lock, `Auto` vs `Both` against classic/sharded Redisson, a map entry's six objects, the grouped multi-lock |
//! | [`group`] | grouped multi-lock scenarios 65–66 (`getMultiLock(group, values)` vs `Client::group_lock`: the value ids as hash fields, overlapping sets excluding each other with a wake-up across languages, force unlock of part of a hold and per-value deadlines; n/a before Redisson 3.38) |
//! | [`map_entry`] | map-entry scenarios 63–64 and 70 (`getMap(m, codec).getLock(key)` & co vs `Client::map_entry`: every derived name for every codec × key type, one entry's lock across languages with a waiter, and each of an entry's six objects across languages for every codec × key type) |
//! | [`one_address`] | scenarios 59–62 on a cluster behind one address (Redisson in single-server mode): holds in several slots, renewal rounds across slots (n/a where Redisson's own renewal is refused), wake-ups, semaphore |
//! | [`latch`] | count-down latch scenarios 43–47 (`RCountDownLatch` vs `Client::count_down_latch`: count, wake-ups, delete, stress) |
//! | [`semaphore`] | semaphore scenarios 48–52 (`RSemaphore` vs `Client::semaphore`: counts, TTL, releaseIfExists, wake-up, mixed stress) |
//! | [`semaphore_party`] | both languages' semaphore operations (`Sem`) and a waiter started in the background |
//! | [`expirable`] | permit-expirable semaphore (`RPermitExpirableSemaphore` vs `Client::permit_expirable_semaphore`): the kind's table and the raw state helpers, scenarios 53–54 (ids, leases, several at once) |
//! | [`expirable_party`] | both languages' permit-expirable semaphore operations (`Pes`) and a waiter started in the background |
//! | [`expirable_lease`] | permit-expirable semaphore scenarios 55–57 (lease expiry, wake-up, the leases of a SIGKILLed holder process) |
//! | [`orders`] | the order database of `examples/fenced_write/` (the Rust side of scenario 58) |
//! | [`counter`] | the mixed-language counter of scenarios 19, 23, 26, 30, 34 and 37 |
//! | [`party`] | one side of a scenario: a Java worker or a Rust owner, every kind's operations |
//! | [`env`] | the per-version environment (harnesses, clients, raw Redis) and party naming |
//! | [`support`] | raw Redis access, polling, shared constants |
//! | [`runner`] | the version matrix: jars, setup, n/a, RESULTS.md, exit code |
//! | [`report`] | rows (pass / fail / n/a) and RESULTS.md |

// Shared with the crate's own tests; not ours to format (rustfmt would follow the path).
#[rustfmt::skip]
#[path = "../../tests/common/mod.rs"]
mod common;

/// `ensure!(cond, "fmt", args…)`: returns `Err(format!(…))` from the enclosing function.
macro_rules! ensure {
    ($cond:expr, $($fmt:tt)+) => {
        let holds: bool = $cond;
        if !holds {
            return Err(format!($($fmt)+));
        }
    };
}

#[path = "matrix/cluster.rs"]
mod cluster;
#[path = "matrix/counter.rs"]
mod counter;
#[path = "matrix/env.rs"]
mod env;
#[path = "matrix/expirable.rs"]
mod expirable;
#[path = "matrix/expirable_lease.rs"]
mod expirable_lease;
#[path = "matrix/expirable_party.rs"]
mod expirable_party;
#[path = "matrix/fair.rs"]
mod fair;
#[path = "matrix/fenced.rs"]
mod fenced;
#[path = "matrix/fenced_write.rs"]
mod fenced_write;
#[path = "matrix/group.rs"]
mod group;
#[path = "matrix/kinds.rs"]
mod kinds;
#[path = "matrix/latch.rs"]
mod latch;
#[path = "matrix/map_entry.rs"]
mod map_entry;
#[path = "matrix/multi.rs"]
mod multi;
#[path = "matrix/non_reentrant.rs"]
mod non_reentrant;
#[path = "matrix/non_reentrant_fair.rs"]
mod non_reentrant_fair;
#[path = "matrix/one_address.rs"]
mod one_address;
// the example's order database, as the example uses it (scenario 58 uses part of it)
#[allow(dead_code)]
#[path = "../../examples/fenced_write/orders.rs"]
mod orders;
#[path = "matrix/party.rs"]
mod party;
#[path = "matrix/report.rs"]
mod report;
#[path = "matrix/rlock.rs"]
mod rlock;
#[path = "matrix/runner.rs"]
mod runner;
#[path = "matrix/rwlock.rs"]
mod rwlock;
#[path = "matrix/semaphore.rs"]
mod semaphore;
#[path = "matrix/semaphore_party.rs"]
mod semaphore_party;
#[path = "matrix/spin.rs"]
mod spin;
#[path = "matrix/support.rs"]
mod support;

/// The old fixed run order, kept as a check of [`kinds::run_order`].
const RUN_ORDER: [usize; 69] = [
    1, 2, 3, 4, 5, 6, 7, 8, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 58, 20, 21, 22, 23, 24, 25, 26, 27, 28,
    29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 71, 72, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52,
    53, 54, 55, 56, 57, 63, 64, 70, 65, 66, 59, 60, 61, 62, 9,
];

fn self_check() -> Result<(), String> {
    let order = kinds::run_order();
    if order != RUN_ORDER {
        return Err(format!("run order {order:?}, expected {RUN_ORDER:?}"));
    }
    // scenario-level n/a: the Redisson call a scenario needs, by version
    for (no, version, runs) in [
        (49, "3.24.3", false),
        (49, "3.52.0", true),
        (50, "3.52.0", false),
        (50, "4.7.0", true),
        (54, "3.17.7", false),
        (54, "3.24.3", true),
        (48, "3.17.7", true),
        (57, "3.17.7", true),
        (65, "3.24.3", false),
        (65, "3.52.0", true),
        (66, "3.17.7", false),
        (66, "4.7.0", true),
        (72, "3.17.7", false),
        (72, "3.52.0", true),
    ] {
        let (_, spec) = kinds::scenario(no).ok_or_else(|| format!("no scenario {no}"))?;
        let why = spec.unavailable(version);
        if why.is_none() != runs {
            return Err(format!(
                "scenario {no} on {version}: unavailable = {why:?}, expected it to run: {runs}"
            ));
        }
    }
    // scenario 61's n/a: what Redisson logged when the endpoint refused its renewal (the shape
    // of Redisson 3.52.0's and 4.7.0's lines; stack frames are not kept)
    let names = [
        "compat:x:s61:j:lock0".to_owned(),
        "compat:x:s61:j:fair3".to_owned(),
    ];
    let renewal = ["12:00:01.000 [redisson-netty-1-2] ERROR LockTask - Can't update locks [compat:x:s61:j:lock0, compat:x:s61:j:fair3] expiration".to_owned()];
    let refused = ["org.redisson.client.RedisException: CROSSSLOT Keys in request don't hash to the same slot. channel: [id: 0x1] command: (EVALSHA, cached script: local result = {} ...), params: [6a3d, 2, compat:x:s61:j:lock0, compat:x:s61:j:fair3, 3000, id:19, id:19], promise: x".to_owned()];
    let why = one_address::renewal_refused(&renewal, &refused, &names);
    let want = "its renewal (EVALSHA over 2 keys) was answered `CROSSSLOT Keys in request don't hash to the same slot` (1 such log line(s) for these locks: `ERROR LockTask - Can't update locks [compat:x:s61:j:lock0, compat:x:s61:j:fair3] expiration`)";
    if why.as_deref() != Some(want) {
        return Err(format!("renewal_refused gave {why:?}, expected {want:?}"));
    }
    let other = ["compat:y:s61:j:lock0".to_owned()];
    if one_address::renewal_refused(&renewal, &refused, &other).is_some()
        || one_address::renewal_refused(&renewal, &[], &names).is_some()
    {
        return Err("renewal_refused blamed a renewal of other locks, or one not refused CROSSSLOT".into());
    }
    report::self_check()
}

fn main() {
    // libtest-style probes (`--list`) must not start the whole matrix.
    if std::env::args().any(|a| a == "--list") {
        println!("matrix: test");
        return;
    }
    if let Err(e) = self_check() {
        eprintln!("compat: self-check FAILED: {e}");
        std::process::exit(1);
    }
    if std::env::args().any(|a| a == "--self-check") {
        println!(
            "compat: self-check ok (report: n/a rows counted apart, shown as n/a; run order; scenario needs)"
        );
        return;
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio runtime");
    let code = rt.block_on(runner::run());
    drop(rt);
    std::process::exit(code);
}
