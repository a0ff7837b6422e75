//! The results: one [`Row`] per scenario × version × direction, and `RESULTS.md`.
//!
//! A row is passed, failed, or **n/a** (the Redisson version has no such lock kind). n/a rows are
//! never counted as passed or failed and never shown as "pass": the matrix cell says `n/a`.

use std::collections::BTreeMap;
use std::fmt::Write;

use redisson_lock_compat_tests::Result;

use crate::counter::{MIN_HANDOVERS, SPIN_MAX_SECS, SPIN_MIN_HANDOVERS};
use crate::kinds::{Dir, Kind};
use crate::latch::LATCH_WAKE_BOUND_MS;
use crate::one_address::{ONE_WAKE_BOUND_MS, ONE_WATCHDOG_MS};
use crate::rwlock::RW_WAKE_BOUND_MS;
use crate::semaphore::SEM_WAKE_BOUND_MS;
use crate::spin::SPIN_WAKE_BOUND_MS;
use crate::support::WAKE_BOUND_MS;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    Pass,
    Fail,
    /// The version has no such lock kind: neither passed nor failed.
    NotAvailable,
}

impl Status {
    /// The word in the tables.
    pub fn word(self) -> &'static str {
        match self {
            Status::Pass => "pass",
            Status::Fail => "**FAIL**",
            Status::NotAvailable => "n/a",
        }
    }
}

pub struct Row {
    pub kind: Kind,
    pub scenario: usize,
    pub title: &'static str,
    pub version: String,
    pub dir: Dir,
    pub status: Status,
    pub latency_ms: Option<f64>,
    pub note: String,
    pub secs: f64,
}

/// Passed, failed and n/a rows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    pub passed: usize,
    pub failed: usize,
    pub not_available: usize,
}

impl Counts {
    pub fn of(rows: &[Row]) -> Counts {
        let n = |s: Status| rows.iter().filter(|r| r.status == s).count();
        Counts {
            passed: n(Status::Pass),
            failed: n(Status::Fail),
            not_available: n(Status::NotAvailable),
        }
    }
}

impl std::fmt::Display for Counts {
    /// `N passed, M failed` (and `, K n/a` when there are n/a rows).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} passed, {} failed", self.passed, self.failed)?;
        if self.not_available > 0 {
            write!(f, ", {} n/a", self.not_available)?;
        }
        Ok(())
    }
}

pub struct RunInfo {
    pub date: String,
    pub redis: String,
    pub java: String,
    pub mvn: String,
    pub versions: Vec<String>,
    /// Per version: the kinds its harness jar listed (`None`: it did not start).
    pub kinds: BTreeMap<String, Option<Vec<String>>>,
    /// How many versions (or the cluster) ran at the same time.
    pub lanes: usize,
    pub secs: f64,
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let idx = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[idx.min(sorted.len() - 1)]
}

fn latency_table(md: &mut String, rows: &[Row], info: &RunInfo, kind: Kind) {
    let _ = writeln!(
        md,
        "| version | samples | p50 | max | all |\n| --- | --- | --- | --- | --- |"
    );
    for v in &info.versions {
        let mut l: Vec<f64> = rows
            .iter()
            .filter(|r| &r.version == v && r.kind == kind)
            .filter_map(|r| r.latency_ms)
            .collect();
        l.sort_by(f64::total_cmp);
        if l.is_empty() {
            let _ = writeln!(md, "| {v} | 0 | – | – | {} |", kind_cell(info, kind, v));
            continue;
        }
        let all: Vec<String> = l.iter().map(|x| format!("{x:.1}")).collect();
        let _ = writeln!(
            md,
            "| {v} | {} | {:.1} | {:.1} | {} |",
            l.len(),
            percentile(&l, 0.5),
            l.last().copied().unwrap_or(f64::NAN),
            all.join(", ")
        );
    }
}

/// The kind's heading cell for `version`: whether the jar has the kind.
fn kind_cell(info: &RunInfo, kind: Kind, version: &str) -> String {
    if kind.topology_one_address() {
        return "single-server mode".into();
    }
    if kind.topology_cluster() {
        return if crate::cluster::CLUSTER_VERSIONS.contains(&version) {
            format!("crate `{:?}`", crate::cluster::mode_for(version))
        } else {
            "not run".into()
        };
    }
    let java = kind.java();
    let needs = || {
        java.since()
            .map(|s| format!("n/a (needs {s}+)"))
            .unwrap_or_else(|| "n/a".into())
    };
    match info.kinds.get(version) {
        Some(Some(kinds)) if kinds.iter().any(|k| k == java.capability()) => "in jar".into(),
        Some(Some(_)) => needs(),
        _ => "?".into(),
    }
}

/// One matrix cell: every direction's word (and latency), or a single `n/a`.
fn cell(rows: &[&Row]) -> String {
    if rows.is_empty() {
        return "–".into(); // not run for this version (the cluster rows: see the kind's heading)
    }
    if !rows.is_empty() && rows.iter().all(|r| r.status == Status::NotAvailable) {
        return Status::NotAvailable.word().into();
    }
    rows.iter()
        .map(|r| {
            let lat = r.latency_ms.map(|l| format!(" {l:.1} ms")).unwrap_or_default();
            format!("{} {}{lat}", r.dir.short(), r.status.word())
        })
        .collect::<Vec<_>>()
        .join("<br>")
}

pub fn render(rows: &[Row], info: &RunInfo) -> String {
    let counts = Counts::of(rows);
    let mut md = String::new();
    let _ = writeln!(md, "# Interop results: redisson-lock (Rust) vs Redisson (Java)\n");
    let _ = writeln!(
        md,
        "Generated by `cargo test -p redisson-lock-compat-tests --test matrix`; do not edit by hand.\n"
    );
    let _ = writeln!(md, "* date: {}", info.date);
    let _ = writeln!(md, "* redis-server: {}", info.redis);
    let _ = writeln!(md, "* java: {}", info.java);
    let _ = writeln!(md, "* maven: {}", info.mvn);
    let _ = writeln!(
        md,
        "* host: {} CPU(s), {}",
        std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0),
        if info.lanes > 1 {
            format!(
                "{} versions at a time (each on a redis-server and JVMs of its own)",
                info.lanes
            )
        } else {
            "versions run one after another".to_owned()
        }
    );
    let _ = writeln!(md, "* Redisson versions: {}", info.versions.join(", "));
    let _ = writeln!(md, "* total run time: {:.0} s", info.secs);
    let _ = writeln!(md, "* **result: {counts}**\n");
    let _ = writeln!(md, "Directions: **J→R** = A (the holder) is a Redisson thread and B a Rust task; **R→J** = A is Rust, B is Java;");
    let _ = writeln!(md, "**J+R** = both languages at once. Wake-up latency = B's acquisition minus A's unlock (or B's force unlock),");
    let _ = writeln!(md, "epoch ms from the harness' `ts_ms` and Rust's `SystemTime` on the same host (Java's side has 1 ms resolution).");
    let _ = writeln!(
        md,
        "A negative value means B acquired before A's side had finished processing its unlock reply: the"
    );
    let _ = writeln!(md, "unlock script publishes inside Redis, so the waiter can be woken before the reply reaches the holder.");
    let _ = writeln!(
        md,
        "The notes give the latency from the *start* of the unlock call too (an upper bound)."
    );
    let _ = writeln!(md, "Scenario 6: the waiter is in A's language, so B's force unlock wakes it across languages. Scenario 8: J→R =");
    let _ = writeln!(md, "the Java threads start first and the Rust tasks join after the first increment, R→J the other way round.");
    let _ = writeln!(
        md,
        "Scenarios 10–15 use the read-write lock (`getReadWriteLock` / `read_write_lock`); timeout keys are"
    );
    let _ = writeln!(md, "`{{N}}:<reader field>:rwlock_timeout:<k>`. Scenario 12: B = 3 readers of the other language; 14: the writer is in B's");
    let _ = writeln!(md, "language; 15: J→R = Java rwcounter workers first, R→J = Rust tasks first. Read-write wake-up bound: {RW_WAKE_BOUND_MS} ms.");
    let _ = writeln!(md, "Scenarios 16–19: fenced lock; tokens are `INCR redisson_lock_token:{{N}}` (a grant takes one, a refused attempt none);");
    let _ = writeln!(md, "Java's `getToken()` answers 0 before the first grant where Rust's `get_token()` answers `None`. 58 (the fenced");
    let _ = writeln!(md, "write): A takes the lock with a 1 s lease, claims an order in a SQLite file (Java over JDBC, Rust with rusqlite, the");
    let _ = writeln!(md, "statements of `examples/fenced_write/orders.rs`) and stalls 1.5 s; B, the other language, gets A's token + 1 once the");
    let _ = writeln!(md, "lease ran out and charges; A's late charge must be refused by the database (the order's fence is B's token), one payment.");
    let _ = writeln!(md, "20–23: spin lock; its waiters poll with a back-off (capped at 128 ms in both libraries) and its unlocks publish nothing,");
    let _ = writeln!(md, "so its hand-over bound is {SPIN_WAKE_BOUND_MS} ms and a `PSUBSCRIBE *{{N}}*` must see no message. 24–26: non-reentrant lock (4.4.0+).");
    let _ = writeln!(md, "27–30: fair lock (every version), 31–34: non-reentrant fair lock (4.4.0+); waiters queue in `redisson_lock_queue:{{N}}`");
    let _ = writeln!(md, "with deadlines in `redisson_lock_timeout:{{N}}`, and only the head is woken, on `redisson_lock__channel:{{N}}:<its field>`;");
    let _ = writeln!(md, "their Rust parties use a client with `poll_interval` 10 s, so a hand-over within {WAKE_BOUND_MS} ms was a message. In 27 and 32");
    let _ = writeln!(md, "the 4 waiters alternate languages, B's first; in 28 the leavers are J→R: Java `tryLock(2 s)` then a Rust `lock()`");
    let _ = writeln!(md, "that is cancelled, R→J the other way round.");
    let _ = writeln!(md, "35–37: multi-lock over three plain locks (every version): Java `RedissonMultiLock`, Rust `Client::multi_lock`; the members'");
    let _ = writeln!(md, "hashes are checked one by one (one owner field on each), and refused or timed-out attempts must leave no member held.");
    let _ = writeln!(md, "38–42: a Redis Cluster of 3 masters + 3 replicas (6 loopback redis-servers, `redis-cli --cluster create --cluster-replicas 1`),");
    let _ = writeln!(md, "the harness in Redisson cluster mode (`--cluster`: `useClusterServers()`, reads from masters, Redisson's default pub/sub");
    let _ = writeln!(md, "choice: classic before 3.22, sharded from 3.22), run for {} only; the crate's mode is in the heading row", crate::cluster::CLUSTER_VERSIONS.join(", "));
    let _ = writeln!(md, "(`Auto` = sharded where Redisson is sharded, `Both` for 3.17.7, which only knows classic pub/sub). 39 and 41 use the");
    let _ = writeln!(md, "10 s-poll Rust client (Java waits its 30 s TTL), bound {} ms. 42 runs the crate in `Auto` against every version: the mismatch", crate::cluster::CLUSTER_WAKE_BOUND_MS);
    let _ = writeln!(md, "of pub/sub kinds (3.17.7 waiters are never woken by an `Auto` unlock, and `Auto` waiters never by a 3.17.7 unlock) must reproduce there.");
    let _ = writeln!(md, "43–47: count-down latch (`getCountDownLatch` / `Client::count_down_latch`, every version; not a lock): J→R = Java sets the count");
    let _ = writeln!(md, "and counts down (or deletes), Rust reads or waits, R→J the other way round; the count is the string at N, the messages (`1` set or delete,");
    let _ = writeln!(md, "`0` the count-down to exactly 0) are checked on `redisson_countdownlatch__channel__{{N}}`. Wake-ups: Rust waiters use the 10 s-poll client");
    let _ = writeln!(md, "(30 s when subscribed), bound {LATCH_WAKE_BOUND_MS} ms. 46 R→J only reports the Java waiter: Redisson's waiters are not woken by a delete.");
    let _ = writeln!(md, "48–52: semaphore (`getSemaphore` / `Client::semaphore`, every version; 49 needs `trySetPermits(int, Duration)`, 3.29.0+, 50 `releaseIfExists`,");
    let _ = writeln!(md, "4.0.0+), 53–57: permit-expirable semaphore (`getPermitExpirableSemaphore` / `Client::permit_expirable_semaphore`, every version; 54 needs");
    let _ = writeln!(md, "the multi-permit calls, 3.23.4+). Not locks: A sets the permits up and takes first, B is the other language, permits and permit ids");
    let _ = writeln!(md, "taken by one language are given back by the other. The count is the string at N, the leases the scores of `{{N}}:timeout` (16 raw id bytes;");
    let _ = writeln!(md, "922337203685477 = no lease), and every message on `redisson_sc:{{N}}` is checked (the permits available after a set, release, add or reclaim;");
    let _ = writeln!(md, "the number given back by a multi-permit release). Wake-ups (51, 55–57): Redisson's waiters do not poll and are not woken by a message `0`,");
    let _ = writeln!(md, "Rust's use the 10 s-poll client (30 s when subscribed); bound {SEM_WAKE_BOUND_MS} ms, 55 from the end of A's lease, 57 from the end of the first");
    let _ = writeln!(md, "lease a SIGKILLed holder process (a harness JVM, or `rust-holder`) left behind. 52: 3 permits, 3 Java workers");
    let _ = writeln!(md, "and 3 Rust tasks in a loop; J→R = Java starts first.");
    let _ = writeln!(md, "59–62: a cluster behind one address (what a cluster proxy or a serverless endpoint looks like: one address that refuses a script");
    let _ = writeln!(md, "over keys of several slots, `CROSSSLOT`), stood in for by one cluster-enabled redis-server owning all 16384 slots, shared by every");
    let _ = writeln!(md, "version of the run; Redisson in single-server mode (`--url`), the Rust client on the same URL, watchdog {ONE_WATCHDOG_MS} ms on both sides,");
    let _ = writeln!(md, "Rust `poll_interval` 10 s; every name of a scenario in a slot of its own. 59 (RLock) and 60 (fair lock): A holds 5 names, shorter than");
    let _ = writeln!(md, "one watchdog timeout; 61: A holds 5 RLocks and 5 fair locks through more than two timeouts (each key renewed at least twice, B refused");
    let _ = writeln!(md, "throughout); 62: semaphore. Wake-up bound {ONE_WAKE_BOUND_MS} ms. 61 J→R is **n/a** where Redisson's own renewal is refused by the endpoint:");
    let _ = writeln!(md, "the note gives when the first hold was found gone and what Redisson logged (its renewal sends the keys of all its holds in one script).");
    let _ = writeln!(md, "19, 23, 26, 30, 34, 37: J→R = the Java counter workers start first, R→J the Rust tasks; the lock must pass between the languages");
    let _ = writeln!(md, "at least {MIN_HANDOVERS} times each way (a kind whose unlock wakes no waiter of the other language manages 0–3);");
    let _ = writeln!(md, "the spin lock (23), whose waiters poll and are not fair, at least {SPIN_MIN_HANDOVERS} times each way within {SPIN_MAX_SECS} s.\n");
    let _ = writeln!(
        md,
        "Rows are grouped by lock kind. A kind's heading row says whether the version's harness jar has it"
    );
    let _ = writeln!(md, "(`compat-tests/src/main/resources/kinds.properties`: spin lock since 3.15.0, fenced lock since 3.19.0,");
    let _ = writeln!(md, "non-reentrant and non-reentrant fair lock since 4.4.0; the plain, read-write and fair locks are in every");
    let _ = writeln!(
        md,
        "version). **n/a** = the Redisson version has no such lock kind, or (49, 50, 54) lacks the call the scenario needs,"
    );
    let _ = writeln!(md, "or (61 J→R) its own watchdog failed on the one-address endpoint (measured, with what Redisson answered);");
    let _ = writeln!(md, "n/a is neither passed nor failed.\n");
    let _ = writeln!(md, "## Matrix\n");
    let _ = write!(md, "| # | scenario |");
    for v in &info.versions {
        let _ = write!(md, " {v} |");
    }
    let _ = write!(md, "\n| --- | --- |");
    for _ in &info.versions {
        let _ = write!(md, " --- |");
    }
    md.push('\n');
    for kind in Kind::ALL {
        let mut scenarios: Vec<(usize, &'static str)> = rows
            .iter()
            .filter(|r| r.kind == kind)
            .map(|r| (r.scenario, r.title))
            .collect();
        scenarios.sort_unstable();
        scenarios.dedup();
        let what = if kind.scenarios().is_empty() {
            ": no scenarios yet"
        } else {
            ""
        };
        let _ = write!(md, "| | **{}**{what} |", kind.title());
        for v in &info.versions {
            let _ = write!(md, " {} |", kind_cell(info, kind, v));
        }
        md.push('\n');
        for (s, title) in scenarios {
            let _ = write!(md, "| {s} | {title} |");
            for v in &info.versions {
                let here: Vec<&Row> = rows
                    .iter()
                    .filter(|r| r.kind == kind && r.scenario == s && &r.version == v)
                    .collect();
                let _ = write!(md, " {} |", cell(&here));
            }
            md.push('\n');
        }
    }
    for kind in Kind::ALL {
        if let Some(heading) = kind.latency_heading() {
            if rows.iter().any(|r| r.kind == kind) {
                let _ = writeln!(md, "\n## {heading}\n");
                latency_table(&mut md, rows, info, kind);
            }
        }
    }
    let _ = writeln!(md, "\n## Details\n");
    let _ = writeln!(md, "| # | version | direction | result | wake-up ms | time s | notes |\n| --- | --- | --- | --- | --- | --- | --- |");
    for r in rows {
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | {} | {:.1} | {} |",
            r.scenario,
            r.version,
            r.dir.long(),
            r.status.word(),
            r.latency_ms
                .map(|l| format!("{l:.1}"))
                .unwrap_or_else(|| "–".into()),
            r.secs,
            r.note.replace('|', "\\|").replace('\n', " ")
        );
    }
    // RESULTS.md is committed: a note may name a file of this checkout (a jar, the build
    // script); it shows relative to the repository root
    match std::path::Path::new(env!("CARGO_MANIFEST_DIR")).parent() {
        Some(root) => md.replace(&format!("{}/", root.display()), ""),
        None => md,
    }
}

/// Checks the report logic on made-up rows (no Redis, no JVM): n/a rows are counted apart,
/// shown as `n/a` and never as `pass`. Runs before every matrix and alone with `-- --self-check`.
pub fn self_check() -> Result<()> {
    let row = |kind, scenario, version: &str, dir, status, latency_ms| Row {
        kind,
        scenario,
        title: "made-up scenario",
        version: version.to_owned(),
        dir,
        status,
        latency_ms,
        note: String::new(),
        secs: 0.0,
    };
    let rows = [
        row(Kind::RLock, 1, "4.7.0", Dir::JavaHolds, Status::Pass, Some(1.5)),
        row(Kind::RLock, 1, "3.17.7", Dir::JavaHolds, Status::Fail, None),
        row(Kind::Fenced, 16, "4.7.0", Dir::JavaHolds, Status::Pass, None),
        row(Kind::Fenced, 16, "4.7.0", Dir::RustHolds, Status::Pass, None),
        row(
            Kind::Fenced,
            16,
            "3.17.7",
            Dir::JavaHolds,
            Status::NotAvailable,
            None,
        ),
        row(
            Kind::Fenced,
            16,
            "3.17.7",
            Dir::RustHolds,
            Status::NotAvailable,
            None,
        ),
    ];
    // a row found n/a at run time next to a passed one: both words in the cell
    let mixed = [
        row(
            Kind::OneAddress,
            61,
            "4.7.0",
            Dir::JavaHolds,
            Status::NotAvailable,
            None,
        ),
        row(
            Kind::OneAddress,
            61,
            "4.7.0",
            Dir::RustHolds,
            Status::Pass,
            Some(1.0),
        ),
    ];
    let mixed_cell = cell(&mixed.iter().collect::<Vec<_>>());
    ensure!(
        mixed_cell == "J→R n/a<br>R→J pass 1.0 ms",
        "cell of an n/a and a passed direction: {mixed_cell}"
    );
    ensure!(
        Counts::of(&mixed).to_string() == "1 passed, 0 failed, 1 n/a",
        "counts of an n/a and a passed direction: {}",
        Counts::of(&mixed)
    );
    let counts = Counts::of(&rows);
    let want = Counts {
        passed: 3,
        failed: 1,
        not_available: 2,
    };
    ensure!(counts == want, "counts {counts:?}, expected {want:?}");
    ensure!(
        counts.to_string() == "3 passed, 1 failed, 2 n/a",
        "summary `{counts}`"
    );
    let no_na = Counts::of(&rows[..2]).to_string();
    ensure!(
        no_na == "1 passed, 1 failed",
        "summary without n/a rows `{no_na}`"
    );
    let info = RunInfo {
        date: "d".into(),
        redis: "r".into(),
        java: "j".into(),
        mvn: "m".into(),
        versions: vec!["4.7.0".into(), "3.17.7".into()],
        kinds: BTreeMap::from([
            (
                "4.7.0".to_owned(),
                Some(vec!["lock".into(), "readWrite".into(), "fenced".into()]),
            ),
            ("3.17.7".to_owned(), Some(vec!["lock".into(), "readWrite".into()])),
        ]),
        lanes: 1,
        secs: 0.0,
    };
    let md = render(&rows, &info);
    let line = |prefix: &str| {
        md.lines()
            .find(|l| l.starts_with(prefix))
            .map(str::to_owned)
            .ok_or_else(|| format!("no line `{prefix}…` in:\n{md}"))
    };
    ensure!(
        md.contains("* **result: 3 passed, 1 failed, 2 n/a**"),
        "summary line missing:\n{md}"
    );
    let s16 = line("| 16 |")?;
    ensure!(
        s16 == "| 16 | made-up scenario | J→R pass<br>R→J pass | n/a |",
        "matrix row: {s16}"
    );
    let s1 = line("| 1 |")?;
    ensure!(
        s1 == "| 1 | made-up scenario | J→R pass 1.5 ms | J→R **FAIL** |",
        "matrix row: {s1}"
    );
    let head = line("| | **Fenced lock")?;
    ensure!(
        head.ends_with("| in jar | n/a (needs 3.19.0+) |"),
        "kind heading: {head}"
    );
    let details: Vec<&str> = md.lines().filter(|l| l.starts_with("| 16 | 3.17.7 |")).collect();
    ensure!(
        details.len() == 2
            && details
                .iter()
                .all(|l| l.contains("| n/a |") && !l.contains("pass")),
        "details of n/a rows: {details:?}"
    );
    // The RLock latency table counts the one sample; no table for kinds without a heading.
    ensure!(
        md.contains("| 4.7.0 | 1 | 1.5 | 1.5 | 1.5 |"),
        "latency table:\n{md}"
    );
    Ok(())
}
