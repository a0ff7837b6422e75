//! What the matrix runs: the lock kinds, their scenarios, the directions.
//!
//! Every kind has a scenario module (`rlock.rs`: 1–9, `rwlock.rs`: 10–15, `fenced.rs`: 16–19 and
//! 58, run by `fenced_write.rs`,
//! `spin.rs`: 20–23, `non_reentrant.rs`: 24–26, `fair.rs`: 27–30, `non_reentrant_fair.rs`: 31–34,
//! `multi.rs`: 35–37, `cluster.rs`: 38–42, `latch.rs`: 43–47, `semaphore.rs`: 48–52,
//! `expirable.rs` and `expirable_lease.rs`: 53–57, `one_address.rs`: 59–62, `map_entry.rs`: 63–64,
//! `group.rs`: 65–66)
//! with a `SCENARIOS`
//! table and a `run` function; [`Kind::ALL`] fixes the order of the run and of the report.
//! [`Kind::Cluster`] is a topology rather than a lock kind: its scenarios (RLock and fair lock
//! in a Redis Cluster) do not run in the per-version single-server environment but afterwards,
//! on one 3-master + 3-replica cluster, for the versions of `cluster::CLUSTER_VERSIONS` in the run
//! (`runner::run_cluster`; [`Kind::topology_cluster`]).
//! [`Kind::OneAddress`] is another topology: a cluster behind one address (one cluster-enabled
//! redis-server owning every slot, reached by a plain URL), Redisson in single-server mode; its
//! scenarios run on one such endpoint for every version of the run (`runner::run_one_address`;
//! [`Kind::topology_one_address`]). A scenario may also find at run time that the version cannot
//! take part ([`Verdict::NotAvailable`], with what was measured): scenario 61 where Redisson's own
//! watchdog is refused by the endpoint.
//! [`Kind::Latch`] is not a lock at all (Redisson's `RCountDownLatch`): like [`Kind::Multi`] it
//! needs only core harness commands (`latch<Op>`, every version), so its rows are never n/a, and
//! its scenarios run in the per-version environment like a lock kind's; directions name who
//! counts down (J→R: Java sets and counts down, Rust reads or waits).
//! [`Kind::Semaphore`] and [`Kind::PermitExpirable`] (Redisson's `RSemaphore` and
//! `RPermitExpirableSemaphore`) are no locks either and, like the latch, use core harness
//! commands (`semaphore<Op>`, `expirable<Op>`, every version); calls that only newer Redisson
//! versions have make a whole scenario "n/a" on older ones through [`Scenario::needs`].
//! A kind whose Redisson version lacks it (the harness jar does not list it, see
//! `kinds.properties`) gets "n/a" rows, which are neither passed nor failed; so does a scenario
//! whose [`Scenario::needs`] names a Redisson API newer than the version.
//!
//! **Adding a kind's scenarios**:
//! 1. `tests/matrix/<kind>.rs` with `pub const SCENARIOS: &[Scenario]` (numbers from 63 on; `needs`
//!    names a Redisson call newer than 3.17.7 that a scenario uses, else `None`) and
//!    `pub async fn run(env, no, dir) -> Result<Outcome>`; declare it in `tests/matrix.rs` and add
//!    its numbers to `RUN_ORDER` there;
//! 2. return them from [`Kind::scenarios`] and dispatch in [`Kind::run`];
//! 3. give the Rust side a handle in `party.rs` (`RustLock`, `Guard`); the Java side already has
//!    every command (`JavaKind::command`; tokens through `Party::java_lock`); a mixed-language
//!    counter is `counter::mixed_counter` (needs the harness' `<kind>Counter`);
//! 4. scenario 9 (runs last) checks every name of every kind: teach it the keys a kind leaves by
//!    design (it already allows the fenced lock's token counter `redisson_lock_token:{N}`, which
//!    has no TTL and which Redisson never deletes; a fair lock's queue and deadlines must be gone).
//!
//! A kind the harness does not have yet also needs its Java side: a `JavaKind`
//! variant (`compat-tests/src/kinds.rs`) and harness commands, either in `Harness.java` (API of
//! every matrix version, like `fair<Op>`; add its id to `JavaKind::CORE` and `CORE_KINDS`) or as an
//! optional kind (`kinds.properties`, `src/main/kinds/<kind>/`, a pom profile), which makes its rows
//! "n/a" on older versions by itself.

use std::time::Duration;

use redisson_lock_compat_tests::{JavaKind, Result};

use crate::env::Env;
use crate::{
    cluster, expirable, fair, fenced, group, latch, map_entry, multi, non_reentrant, non_reentrant_fair,
    one_address, rlock, rwlock, semaphore, spin,
};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dir {
    /// A (holder) is Java, B (waiter) is Rust.
    JavaHolds,
    /// A (holder) is Rust, B (waiter) is Java.
    RustHolds,
    /// Both languages at once (scenarios 8 and 9).
    Both,
}

impl Dir {
    pub fn short(self) -> &'static str {
        match self {
            Dir::JavaHolds => "J→R",
            Dir::RustHolds => "R→J",
            Dir::Both => "J+R",
        }
    }
    pub fn long(self) -> &'static str {
        match self {
            Dir::JavaHolds => "Java holds, Rust waits",
            Dir::RustHolds => "Rust holds, Java waits",
            Dir::Both => "Java and Rust together",
        }
    }
    pub fn tag(self) -> &'static str {
        match self {
            Dir::JavaHolds => "j",
            Dir::RustHolds => "r",
            Dir::Both => "b",
        }
    }
}

/// Both directions (most scenarios).
pub const BOTH_WAYS: &[Dir] = &[Dir::JavaHolds, Dir::RustHolds];
/// One run with both languages at once.
pub const TOGETHER: &[Dir] = &[Dir::Both];

/// What a passing scenario reports.
#[derive(Default)]
pub struct Outcome {
    pub latency_ms: Option<f64>,
    pub note: String,
}

/// What a scenario that ran found: passed, or the version cannot take part (an n/a row whose
/// note says what was measured; only [`Kind::OneAddress`] scenarios decide so at run time).
pub enum Verdict {
    Pass(Outcome),
    NotAvailable(String),
}

/// One scenario of a kind.
pub struct Scenario {
    /// Its number (unique across kinds; the table's `#`).
    pub no: usize,
    pub title: &'static str,
    pub dirs: &'static [Dir],
    /// The limit of one run (one direction).
    pub limit_s: u64,
    /// Runs after every other scenario of every kind (scenario 9: nothing left behind).
    pub last: bool,
    /// A Redisson API the scenario needs beyond its kind (`None`: the kind is enough): on an
    /// older version the scenario is "n/a", not run.
    pub needs: Option<Needs>,
}

/// A Redisson call newer than the oldest version of the matrix.
pub struct Needs {
    /// The first Redisson version with it.
    pub since: &'static str,
    /// What it is, for the n/a note (`RSemaphore.releaseIfExists`).
    pub what: &'static str,
}

impl Scenario {
    pub fn limit(&self) -> Duration {
        Duration::from_secs(self.limit_s)
    }

    /// Why the scenario cannot run on Redisson `version` (its [`needs`](Self::needs) is newer),
    /// or `None` when it can.
    pub fn unavailable(&self, version: &str) -> Option<String> {
        let n = self.needs.as_ref()?;
        if redisson_lock_compat_tests::version_at_least(version, n.since) {
            return None;
        }
        Some(format!(
            "Redisson {version} has no {} (needs {}+)",
            n.what, n.since
        ))
    }
}

/// A lock kind of the matrix.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    RLock,
    RwLock,
    Fenced,
    Spin,
    NonReentrant,
    Fair,
    NonReentrantFair,
    /// `RedissonMultiLock` over plain locks: no harness kind of its own (every version has it;
    /// the harness' `multi<Op>` commands are core).
    Multi,
    /// The RLock (and fair lock) in a Redis Cluster: a topology, run by `runner::run_cluster`.
    Cluster,
    /// `RCountDownLatch` / `Client::count_down_latch`: not a lock; core harness commands
    /// (`latch<Op>`, every version).
    Latch,
    /// `RSemaphore` / `Client::semaphore`: not a lock; core harness commands (`semaphore<Op>`,
    /// every version; newer calls by reflection, see [`Scenario::needs`]).
    Semaphore,
    /// `RPermitExpirableSemaphore` / `Client::permit_expirable_semaphore`: core harness commands
    /// (`expirable<Op>`), as [`Kind::Semaphore`].
    PermitExpirable,
    /// The objects of a map entry (`RMap.getLock(key)` & co / `Client::map_entry`): their names
    /// for every codec and key type, and one entry's lock across languages; core harness
    /// commands (`mapEntryName`, `mapLock<Op>`, every version).
    MapEntry,
    /// Redisson's grouped multi-lock (`getMultiLock(group, values)`, 3.38+ / `Client::group_lock`):
    /// core harness commands (`group<Op>`, by reflection; [`Scenario::needs`] makes its rows n/a
    /// on older versions).
    Group,
    /// A cluster behind one address (RLock, fair lock, semaphore): a topology, run by
    /// `runner::run_one_address`; core harness commands only.
    OneAddress,
}

impl Kind {
    /// The order of the run and of the report.
    pub const ALL: [Kind; 15] = [
        Kind::RLock,
        Kind::RwLock,
        Kind::Fenced,
        Kind::Spin,
        Kind::NonReentrant,
        Kind::Fair,
        Kind::NonReentrantFair,
        Kind::Multi,
        Kind::Cluster,
        Kind::Latch,
        Kind::Semaphore,
        Kind::PermitExpirable,
        Kind::MapEntry,
        Kind::Group,
        Kind::OneAddress,
    ];

    /// Whether the kind's scenarios need the cluster environment (not the single server).
    pub fn topology_cluster(self) -> bool {
        self == Kind::Cluster
    }

    /// Whether the kind's scenarios need the one-address environment.
    pub fn topology_one_address(self) -> bool {
        self == Kind::OneAddress
    }

    /// Whether the kind's scenarios run apart from the per-version single server.
    pub fn own_topology(self) -> bool {
        self.topology_cluster() || self.topology_one_address()
    }

    /// The heading of its rows in RESULTS.md.
    pub fn title(self) -> &'static str {
        match self {
            Kind::RLock => "RLock (`getLock` / `Client::lock`)",
            Kind::RwLock => "Read-write lock (`getReadWriteLock` / `Client::read_write_lock`)",
            Kind::Fenced => "Fenced lock (`getFencedLock` / `Client::fenced_lock`)",
            Kind::Spin => "Spin lock (`getSpinLock` / `Client::spin_lock`)",
            Kind::NonReentrant => "Non-reentrant lock (`getNonReentrantLock` / `Client::non_reentrant_lock`)",
            Kind::Fair => "Fair lock (`getFairLock` / `Client::fair_lock`)",
            Kind::NonReentrantFair => {
                "Non-reentrant fair lock (`getNonReentrantFairLock` / `Client::non_reentrant_fair_lock`)"
            }
            Kind::Multi => "MultiLock (`new RedissonMultiLock(getLock(..), ..)` / `Client::multi_lock`)",
            Kind::Cluster => {
                "Redis Cluster, 3 masters + 3 replicas (`useClusterServers()` / `ClientBuilder::cluster`)"
            }
            Kind::Latch => "Count-down latch (`getCountDownLatch` / `Client::count_down_latch`)",
            Kind::Semaphore => "Semaphore (`getSemaphore` / `Client::semaphore`)",
            Kind::PermitExpirable => {
                "Permit-expirable semaphore (`getPermitExpirableSemaphore` / `Client::permit_expirable_semaphore`)"
            }
            Kind::MapEntry => {
                "Map entries (`getMap(m, codec).getLock(key)` & co / `Client::map_entry`, feature `map-entry`)"
            }
            Kind::Group => "Grouped multi-lock (`getMultiLock(group, values)` / `Client::group_lock`, feature `group-lock`)",
            Kind::OneAddress => {
                "A cluster behind one address (one cluster-enabled redis-server owning every slot; `useSingleServer()` / `Client::connect(url)`)"
            }
        }
    }

    /// The heading of the kind's wake-up latency table (`None`: no table).
    pub fn latency_heading(self) -> Option<&'static str> {
        match self {
            Kind::RLock => Some("Wake-up latency per version (ms; scenarios 2, 3, 5, 6, both directions)"),
            Kind::RwLock => Some(
                "Read-write wake-up latency per version (ms; scenario 12 = the last of 3 readers woken by a write unlock, 14 = a writer woken by the last read unlock)",
            ),
            Kind::Fenced => Some("Fenced wake-up latency per version (ms; scenario 18: B blocked in lock_and_get_token woken by A's unlock, bound 200 ms)"),
            Kind::Spin => Some(
                "Spin hand-over by polling per version (ms; scenario 21 = after A's unlock, 22 = after B's force unlock; no pub/sub, bound 500 ms)",
            ),
            Kind::NonReentrant => Some("Non-reentrant wake-up latency per version (ms; scenario 25, bound 200 ms)"),
            Kind::Fair => Some(
                "Fair wake-up latency per version (ms; scenario 29: B, the head, woken on its own channel by A's unlock; Rust poll_interval 10 s; bound 200 ms)",
            ),
            Kind::NonReentrantFair => Some("Non-reentrant fair wake-up latency per version (ms; scenario 33, as 29)"),
            Kind::Multi => Some(
                "Multi-lock wake-up per version (ms; scenario 36: A's multi lock(), holding the first two members, gets the last one after B's unlock of it; bound 1000 ms)",
            ),
            Kind::Cluster => Some(
                "Cluster wake-up latency per version (ms; scenarios 39 and 41 in the version's mode, 42 with the crate in Auto where Java listens sharded; bound 500 ms)",
            ),
            Kind::Latch => Some(
                "Count-down latch wake-up per version (ms; 44: B's wait after A's last count-down, 46 J→R: a Rust waiter after Java's delete, 47: the slowest of 4 waiters after the last count-down reply; Rust re-polls every 30 s; bound 3000 ms)",
            ),
            Kind::Semaphore => Some(
                "Semaphore wake-up per version (ms; 51: B's acquire(2) after A's second release(1) reply; Java waiters do not poll, Rust re-polls every 30 s; bound 5000 ms)",
            ),
            Kind::PermitExpirable => Some(
                "Permit-expirable semaphore wake-up per version (ms; 55: B's acquire() after the end of A's 1.5 s lease (its zset score), 56: B's acquire() after A's release(id) reply, 57: B's acquire() after the end of the first 2 s lease of a SIGKILLed holder process; bound 5000 ms)",
            ),
            Kind::Group => Some("Grouped-lock wake-up per version (ms; scenario 65: B's lock() of an overlapping value set after A's unlock; bound 1000 ms)"),
            Kind::MapEntry => Some("Map-entry wake-up per version (ms; scenario 64: B's lock() of the entry after A's unlock; bound 1000 ms)"),
            Kind::OneAddress => Some(
                "One-address wake-up per version (ms; 59: B's lock(), 60: B's fair lock() (the head), 61: B's lock() blocked through A's whole 6.5 s hold, 62: B's semaphore acquire(), each after A's unlock / release reply; watchdog 3 s on both sides, Rust poll_interval 10 s; bound 500 ms)",
            ),
        }
    }

    /// The harness kind whose presence in a jar decides "n/a".
    pub fn java(self) -> JavaKind {
        match self {
            Kind::RLock => JavaKind::Lock,
            Kind::RwLock => JavaKind::Read,
            Kind::Fenced => JavaKind::Fenced,
            Kind::Spin => JavaKind::Spin,
            Kind::NonReentrant => JavaKind::NonReentrant,
            Kind::Fair => JavaKind::Fair,
            Kind::NonReentrantFair => JavaKind::NonReentrantFair,
            Kind::Multi => JavaKind::Lock,
            Kind::Cluster => JavaKind::Lock,
            // core commands: present in every jar, like the plain lock
            Kind::Latch
            | Kind::Semaphore
            | Kind::PermitExpirable
            | Kind::MapEntry
            | Kind::Group
            | Kind::OneAddress => JavaKind::Lock,
        }
    }

    pub fn scenarios(self) -> &'static [Scenario] {
        match self {
            Kind::RLock => rlock::SCENARIOS,
            Kind::RwLock => rwlock::SCENARIOS,
            Kind::Fenced => fenced::SCENARIOS,
            Kind::Spin => spin::SCENARIOS,
            Kind::NonReentrant => non_reentrant::SCENARIOS,
            Kind::Fair => fair::SCENARIOS,
            Kind::NonReentrantFair => non_reentrant_fair::SCENARIOS,
            Kind::Multi => multi::SCENARIOS,
            Kind::Cluster => cluster::SCENARIOS,
            Kind::Latch => latch::SCENARIOS,
            Kind::Semaphore => semaphore::SCENARIOS,
            Kind::PermitExpirable => expirable::SCENARIOS,
            Kind::MapEntry => map_entry::SCENARIOS,
            Kind::Group => group::SCENARIOS,
            Kind::OneAddress => one_address::SCENARIOS,
        }
    }

    pub async fn run(self, env: &Env, no: usize, dir: Dir) -> Result<Verdict> {
        let outcome = match self {
            Kind::RLock => rlock::run(env, no, dir).await,
            Kind::RwLock => rwlock::run(env, no, dir).await,
            Kind::Fenced => fenced::run(env, no, dir).await,
            Kind::Spin => spin::run(env, no, dir).await,
            Kind::NonReentrant => non_reentrant::run(env, no, dir).await,
            Kind::Fair => fair::run(env, no, dir).await,
            Kind::NonReentrantFair => non_reentrant_fair::run(env, no, dir).await,
            Kind::Multi => multi::run(env, no, dir).await,
            Kind::Cluster => cluster::run(env, no, dir).await,
            Kind::Latch => latch::run(env, no, dir).await,
            Kind::Semaphore => semaphore::run(env, no, dir).await,
            Kind::PermitExpirable => expirable::run(env, no, dir).await,
            Kind::MapEntry => map_entry::run(env, no, dir).await,
            Kind::Group => group::run(env, no, dir).await,
            Kind::OneAddress => return one_address::run(env, no, dir).await,
        };
        outcome.map(Verdict::Pass)
    }
}

/// The kind and scenario of number `no`.
pub fn scenario(no: usize) -> Option<(Kind, &'static Scenario)> {
    Kind::ALL
        .into_iter()
        .flat_map(|k| k.scenarios().iter().map(move |s| (k, s)))
        .find(|(_, s)| s.no == no)
}

/// Every scenario number in run order: each kind's in [`Kind::ALL`] order, the `last` ones at
/// the end (1–8, 10–19, 58, 20–42, 71, 43–57, 63–64, 70, 65–66, 59–62, 9).
pub fn run_order() -> Vec<usize> {
    let all = || Kind::ALL.into_iter().flat_map(|k| k.scenarios().iter());
    all()
        .filter(|s| !s.last)
        .chain(all().filter(|s| s.last))
        .map(|s| s.no)
        .collect()
}
