//! Histories of critical sections, recorded by several worker processes (one JSON-lines file per
//! process), and Jepsen-style checkers over them.
//!
//! Times are nanoseconds of `CLOCK_MONOTONIC` ([`now_ns`]), which every process on the machine
//! shares (Rust's `Instant` cannot be sent to another process).
//!
//! The model: a section of lock `L` starts when its acquire call returned (the grant happened
//! earlier) and ends when the holder called unlock (the release happens later), so a recorded
//! overlap of two sections is a real one. A hold whose loss the holder learned (`guard.lost()`
//! resolved, or `guard.state()` said `Lost`) ends at the moment it learned ("lost = released
//! when learned"): after that the holder must not act as the holder.
//!
//! Checkers:
//! * [`check_overlaps`]: no two sections of one lock overlap; an overlap is *explained* when a
//!   fault that erased the lock's data (restart without persistence, `FLUSHALL`, a key of another
//!   type written over the lock) hit one of the two holds, which then lost its hold.
//! * [`check_unlocks`]: one acquire, one unlock, `Released`; `Partial` means Redis counted the
//!   acquisition twice; `NotHeld` needs a signalled loss or an erasing fault; an unlock error
//!   needs a fault around the unlock.
//! * [`check_losses`]: a hold is lost only when a fault erased its data.
//! * [`summarize`]: counts per outcome, per fault, waits and throughput; [`handoffs`]: how often a
//!   lock passed between parties.
//!
//! Sections come from this crate's workers ([`Party::Rust`]) and, when a JDK is present, from real
//! Redisson ([`Party::Java`], the JVM harness' `contend` command, timed with `System.nanoTime()`,
//! which is `CLOCK_MONOTONIC` on Linux HotSpot). Every section enters the overlap check; the
//! unlock and loss checkers judge this crate's sections only.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::{BufRead, BufWriter, Write};
use std::path::Path;
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

/// `CLOCK_MONOTONIC` in nanoseconds: comparable between processes on one machine.
pub fn now_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; CLOCK_MONOTONIC always exists on Linux.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_MONOTONIC)");
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// A `tokio::time::Instant` for a `CLOCK_MONOTONIC` time `t` (ns), e.g. a deadline chosen by
/// another process.
pub fn instant_at(t: u64) -> tokio::time::Instant {
    let now_i = tokio::time::Instant::now();
    let now = now_ns();
    if t >= now {
        now_i + std::time::Duration::from_nanos(t - now)
    } else {
        now_i
            .checked_sub(std::time::Duration::from_nanos(now - t))
            .unwrap_or(now_i)
    }
}

/// How an unlock call ended.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "result", rename_all = "kebab-case")]
pub enum UnlockResult {
    /// `Ok(Unlocked::Released)`.
    Released,
    /// `Ok(Unlocked::Partial)`: the owner still holds it, so Redis counted more acquisitions.
    Partial,
    /// `Err(Error::NotHeld)`.
    NotHeld,
    /// Any other error.
    Error { message: String },
    /// The unlock call did not return within the worker's limit.
    Hung,
}

impl UnlockResult {
    pub fn label(&self) -> &'static str {
        match self {
            UnlockResult::Released => "released",
            UnlockResult::Partial => "partial",
            UnlockResult::NotHeld => "not-held",
            UnlockResult::Error { .. } => "error",
            UnlockResult::Hung => "hung",
        }
    }
}

/// The holder learned that its hold was lost.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Loss {
    /// `LostReason` as `Debug` text (`OwnerGone`, `RenewalFailed`, ...).
    pub reason: String,
    /// When the holder learned it.
    pub learned: u64,
}

/// Who recorded a section.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Party {
    /// A worker of this crate (the checkers' rules are this crate's promises).
    #[default]
    Rust,
    /// Real Redisson (the `contend` command of `compat-tests/`' JVM harness): its sections count
    /// for the overlap check only; its unlock results and losses are Redisson's business, and
    /// the report lists them.
    Java,
}

impl Party {
    pub fn label(self) -> &'static str {
        match self {
            Party::Rust => "rust",
            Party::Java => "java",
        }
    }
}

/// One critical section: an acquisition that succeeded, the hold, and how it ended.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Section {
    /// Absent in the JSON of a Rust worker's section.
    #[serde(default, skip_serializing_if = "Party::is_rust")]
    pub party: Party,
    pub lock: String,
    /// Worker process index.
    pub process: u32,
    /// Task index inside the process.
    pub worker: u32,
    /// What the task does (`hot`, `long`, `renew`, `victim`).
    pub role: String,
    /// `lock`, `try_lock_for`, `lock_with_lease`.
    pub method: String,
    /// The hold's hash field `<client id>:<owner id>`.
    pub owner: String,
    /// When the acquire call was made.
    pub acquire_start: u64,
    /// When the acquire call returned the guard.
    pub start: u64,
    /// When the holder stopped working and called unlock.
    pub end: u64,
    /// When unlock returned.
    pub unlock_done: u64,
    pub unlock: UnlockResult,
    pub lost: Option<Loss>,
}

impl Party {
    fn is_rust(&self) -> bool {
        *self == Party::Rust
    }
}

impl Section {
    /// Who held it, for messages: `p<process>/w<task>` or `java/w<worker>`.
    pub fn holder(&self) -> String {
        match self.party {
            Party::Rust => format!("p{}/w{}", self.process, self.worker),
            Party::Java => format!("java/w{}", self.worker),
        }
    }

    /// The end under "lost = released when learned".
    pub fn effective_end(&self) -> u64 {
        match &self.lost {
            Some(l) => l.learned.min(self.end),
            None => self.end,
        }
    }

    /// The hold ended otherwise than by its owner: a loss was signalled or unlock found nothing.
    pub fn lost_hold(&self) -> bool {
        self.lost.is_some() || self.unlock == UnlockResult::NotHeld
    }
}

/// How an acquisition that produced no section ended.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "result", rename_all = "kebab-case")]
pub enum AttemptResult {
    /// `try_lock_for` returned `Ok(None)`.
    NotAcquired,
    Error {
        message: String,
    },
    /// Dropped at the end of the run (the acquire future was cancelled).
    Cancelled,
    /// Did not return within the worker's limit (then dropped).
    Hung,
}

impl AttemptResult {
    pub fn label(&self) -> String {
        match self {
            AttemptResult::NotAcquired => "not-acquired".into(),
            AttemptResult::Error { message } => format!("error: {}", error_class(message)),
            AttemptResult::Cancelled => "cancelled-at-stop".into(),
            AttemptResult::Hung => "hung".into(),
        }
    }
}

/// The first words of an error message, without the variable parts (keys, fields, durations).
pub fn error_class(message: &str) -> String {
    let m = message;
    for (needle, class) in [
        ("timed out after", "command timeout"),
        ("holds a value of another type", "wrong type"),
        ("OOM", "OOM"),
        ("BUSY", "BUSY"),
        ("Connection refused", "connection refused"),
        ("refused", "connection refused"),
        ("broken pipe", "broken pipe"),
        ("Broken pipe", "broken pipe"),
        ("reset by peer", "connection reset"),
        ("dropped", "connection dropped"),
        ("closed", "connection closed"),
        ("not held", "not held"),
        ("NOSCRIPT", "NOSCRIPT"),
        ("LOADING", "LOADING"),
        ("shut down", "shutdown"),
        ("timeout", "timeout"),
        ("Timeout", "timeout"),
    ] {
        if m.contains(needle) {
            return class.to_owned();
        }
    }
    m.chars().take(60).collect()
}

/// An acquisition that produced no section.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Attempt {
    pub lock: String,
    pub process: u32,
    pub worker: u32,
    pub role: String,
    pub method: String,
    pub start: u64,
    pub end: u64,
    /// The wait passed to `try_lock_for`, in ms.
    pub wait_ms: Option<u64>,
    pub outcome: AttemptResult,
}

/// One injected fault, from the moment the injector started to the moment its effect ended.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FaultRecord {
    /// `sigstop`, `client-kill-normal`, `flushall`, `restart`, ...
    pub kind: String,
    pub detail: String,
    /// Erases every lock in Redis (restart without persistence, `FLUSHALL`).
    pub data_loss: bool,
    /// A lock name whose data this fault overwrote (a key of another type written over it).
    pub target: Option<String>,
    pub start: u64,
    pub end: u64,
    /// The injector failed (the fault may not have happened).
    pub error: Option<String>,
}

impl FaultRecord {
    /// Whether this fault may have erased the data of lock `lock`.
    pub fn erases(&self, lock: &str) -> bool {
        self.error.is_none() && (self.data_loss || self.target.as_deref() == Some(lock))
    }
}

/// A stretch of the run (warm-up, the non-data-loss nemesis, the data-loss nemesis, ...).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Phase {
    pub name: String,
    /// Whether data-loss faults are injected in this phase.
    pub data_loss: bool,
    pub start: u64,
    pub end: u64,
}

/// A sampler's finding about a lock key: no TTL (`pttl == -1`) or more than one owner field.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sample {
    pub time: u64,
    pub lock: String,
    pub pttl: i64,
    /// Fields in the lock hash; -1 when the key is not a hash.
    pub hlen: i64,
    pub problem: String,
}

/// One line of a history file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum Record {
    Section(Section),
    Attempt(Attempt),
    Fault(FaultRecord),
    Phase(Phase),
    Sample(Sample),
}

/// Appends records to a JSON-lines file (shared by the tasks of one process).
pub struct HistoryWriter {
    out: Mutex<BufWriter<std::fs::File>>,
}

impl HistoryWriter {
    pub fn create(path: &Path) -> HistoryWriter {
        let f = std::fs::File::create(path)
            .unwrap_or_else(|e| panic!("create history file {}: {e}", path.display()));
        HistoryWriter {
            out: Mutex::new(BufWriter::new(f)),
        }
    }

    pub fn record(&self, r: &Record) {
        let line = serde_json::to_string(r).expect("serialize a history record");
        let mut out = self.out.lock().unwrap();
        writeln!(out, "{line}").expect("write the history file");
    }

    pub fn flush(&self) {
        self.out.lock().unwrap().flush().expect("flush the history file");
    }
}

/// Everything recorded in one run, from every process.
#[derive(Clone, Debug, Default)]
pub struct History {
    pub sections: Vec<Section>,
    pub attempts: Vec<Attempt>,
    pub faults: Vec<FaultRecord>,
    pub phases: Vec<Phase>,
    pub samples: Vec<Sample>,
}

impl History {
    pub fn push(&mut self, r: Record) {
        match r {
            Record::Section(s) => self.sections.push(s),
            Record::Attempt(a) => self.attempts.push(a),
            Record::Fault(f) => self.faults.push(f),
            Record::Phase(p) => self.phases.push(p),
            Record::Sample(s) => self.samples.push(s),
        }
    }

    /// Reads JSON-lines files; a line that does not parse fails (with file and line number).
    pub fn load(paths: &[impl AsRef<Path>]) -> History {
        let mut h = History::default();
        for p in paths {
            let p = p.as_ref();
            let f =
                std::fs::File::open(p).unwrap_or_else(|e| panic!("open history file {}: {e}", p.display()));
            for (i, line) in std::io::BufReader::new(f).lines().enumerate() {
                let line = line.unwrap_or_else(|e| panic!("read {}: {e}", p.display()));
                if line.trim().is_empty() {
                    continue;
                }
                let r: Record = serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("{}:{}: bad history line ({e}): {line}", p.display(), i + 1));
                h.push(r);
            }
        }
        h.sort();
        h
    }

    /// Orders everything by time.
    pub fn sort(&mut self) {
        self.sections.sort_by_key(|s| (s.start, s.process, s.worker));
        self.attempts.sort_by_key(|a| (a.start, a.process, a.worker));
        self.faults.sort_by_key(|f| f.start);
        self.phases.sort_by_key(|p| p.start);
        self.samples.sort_by_key(|s| s.time);
    }

    /// The origin for printed times: the first phase, fault or acquisition.
    pub fn t0(&self) -> u64 {
        let mut t = u64::MAX;
        if let Some(p) = self.phases.iter().map(|p| p.start).min() {
            t = t.min(p);
        }
        if let Some(s) = self.sections.iter().map(|s| s.acquire_start).min() {
            t = t.min(s);
        }
        if let Some(f) = self.faults.iter().map(|f| f.start).min() {
            t = t.min(f);
        }
        if t == u64::MAX {
            0
        } else {
            t
        }
    }

    /// The phase that contains `t`.
    pub fn phase_at(&self, t: u64) -> Option<&Phase> {
        self.phases.iter().find(|p| p.start <= t && t <= p.end)
    }

    /// Faults whose window `[start, end + slack]` meets `[from, to]`.
    pub fn faults_in(&self, from: u64, to: u64, slack: u64) -> Vec<usize> {
        self.faults
            .iter()
            .enumerate()
            .filter(|(_, f)| f.start <= to && f.end.saturating_add(slack) >= from)
            .map(|(i, _)| i)
            .collect()
    }

    /// Seconds since [`History::t0`], for messages.
    pub fn at(&self, t: u64) -> String {
        let t0 = self.t0();
        if t >= t0 {
            format!("t+{:.6}s", (t - t0) as f64 / 1e9)
        } else {
            format!("t-{:.6}s", (t0 - t) as f64 / 1e9)
        }
    }

    pub fn describe_section(&self, s: &Section) -> String {
        let mut out = format!(
            "{} {} ({} {}) owner {} acquire {} section [{} .. {}] unlock {} at {}",
            s.lock,
            s.holder(),
            s.role,
            s.method,
            s.owner,
            self.at(s.acquire_start),
            self.at(s.start),
            self.at(s.end),
            match &s.unlock {
                UnlockResult::Error { message } => format!("error `{message}`"),
                other => other.label().to_owned(),
            },
            self.at(s.unlock_done),
        );
        if let Some(l) = &s.lost {
            let _ = write!(out, ", lost ({}) learned at {}", l.reason, self.at(l.learned));
        }
        out
    }

    pub fn describe_fault(&self, i: usize) -> String {
        let f = &self.faults[i];
        let mut out = format!(
            "{} [{} .. {}, {:.0} ms] {}",
            f.kind,
            self.at(f.start),
            self.at(f.end),
            (f.end - f.start) as f64 / 1e6,
            f.detail
        );
        if let Some(e) = &f.error {
            let _ = write!(out, " (injector error: {e})");
        }
        out
    }

    pub fn describe_faults(&self, idx: &[usize]) -> String {
        if idx.is_empty() {
            "none".to_owned()
        } else {
            idx.iter()
                .map(|&i| self.describe_fault(i))
                .collect::<Vec<_>>()
                .join("; ")
        }
    }
}

/// Tolerances of the checkers.
#[derive(Clone, Copy, Debug)]
pub struct Rules {
    /// How long after a fault ended its effects may still explain an unlock error
    /// (reconnects, retries).
    pub aftermath_ns: u64,
    /// How far back from a loss to look for faults to list in a message (the trust window of
    /// a watchdog hold).
    pub lookback_ns: u64,
}

impl Default for Rules {
    fn default() -> Self {
        Rules {
            aftermath_ns: 1_000_000_000,
            lookback_ns: 3_000_000_000,
        }
    }
}

/// Two sections of one lock that overlap.
#[derive(Clone, Debug)]
pub struct Overlap {
    pub lock: String,
    /// Indices into `History::sections`; `a` started first.
    pub a: usize,
    pub b: usize,
    pub from: u64,
    pub to: u64,
    /// The erasing fault that explains it, if any.
    pub explained_by: Option<usize>,
    /// Phase containing the overlap's start.
    pub phase: String,
    /// Whether that phase injects data-loss faults.
    pub data_loss_phase: bool,
    /// Faults active during the two holds.
    pub active: Vec<usize>,
}

impl Overlap {
    /// The parties of the two sections (first-started first).
    pub fn parties(&self, h: &History) -> (Party, Party) {
        (h.sections[self.a].party, h.sections[self.b].party)
    }

    /// A Java section and a Rust section.
    pub fn java_vs_rust(&self, h: &History) -> bool {
        let (a, b) = self.parties(h);
        a != b
    }

    pub fn describe(&self, h: &History) -> String {
        let a = &h.sections[self.a];
        let b = &h.sections[self.b];
        format!(
            "lock `{}`: sections overlap for {:.3} ms from {} (phase {}):\n      A: {}\n      B: {}\n      {}; faults during the holds: {}",
            self.lock,
            (self.to - self.from) as f64 / 1e6,
            h.at(self.from),
            self.phase,
            h.describe_section(a),
            h.describe_section(b),
            match self.explained_by {
                Some(f) => format!("explained by {}", h.describe_fault(f)),
                None => "UNEXPLAINED".to_owned(),
            },
            h.describe_faults(&self.active),
        )
    }
}

/// (a) Every pair of overlapping sections of one lock, with its explanation if any.
///
/// A section ends at its end, or when its holder learned of a loss. An overlap is explained
/// when one of the two holds lost its hold (loss signalled or unlock `NotHeld`) and a fault
/// that erased that lock's data happened after that hold's acquisition began and before the
/// other section began.
pub fn check_overlaps(h: &History) -> Vec<Overlap> {
    let mut by_lock: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, s) in h.sections.iter().enumerate() {
        by_lock.entry(s.lock.as_str()).or_default().push(i);
    }
    let mut out = Vec::new();
    for (lock, mut idx) in by_lock {
        idx.sort_by_key(|&i| (h.sections[i].start, h.sections[i].effective_end()));
        // sections started so far whose effective end lies after the current start
        let mut open: Vec<usize> = Vec::new();
        for &j in &idx {
            let b = &h.sections[j];
            open.retain(|&i| h.sections[i].effective_end() > b.start);
            for &i in &open {
                let a = &h.sections[i];
                let to = a.effective_end().min(b.effective_end());
                if to <= b.start {
                    continue; // b ended (learned its loss) before it began working: nothing overlaps
                }
                let explained_by = explain(h, lock, a, b).or_else(|| explain(h, lock, b, a));
                let phase = h.phase_at(b.start);
                out.push(Overlap {
                    lock: lock.to_owned(),
                    a: i,
                    b: j,
                    from: b.start,
                    to,
                    explained_by,
                    phase: phase.map(|p| p.name.clone()).unwrap_or_else(|| "-".into()),
                    data_loss_phase: phase.is_some_and(|p| p.data_loss),
                    active: h.faults_in(a.acquire_start.min(b.acquire_start), a.end.max(b.end), 0),
                });
            }
            if b.effective_end() > b.start {
                open.push(j);
            }
        }
    }
    out
}

/// A fault that erased `x`'s hold before `y` began, with `x` having lost its hold.
fn explain(h: &History, lock: &str, x: &Section, y: &Section) -> Option<usize> {
    if !x.lost_hold() {
        return None;
    }
    h.faults
        .iter()
        .position(|f| f.erases(lock) && f.end >= x.acquire_start && f.start <= y.start)
}

/// An unlock that is not what one acquire followed by one unlock must give.
#[derive(Clone, Debug)]
pub struct UnlockProblem {
    pub section: usize,
    pub what: String,
    /// Faults during the acquisition and hold (for `Partial`) or around the unlock.
    pub faults: Vec<usize>,
}

impl UnlockProblem {
    pub fn describe(&self, h: &History) -> String {
        format!(
            "{}: {}; faults then: {}",
            self.what,
            h.describe_section(&h.sections[self.section]),
            h.describe_faults(&self.faults)
        )
    }
}

/// (b) One acquire then one unlock must give `Released`.
///
/// * `Partial` is always a problem: Redis counted the one acquisition more than once.
/// * `NotHeld` needs a signalled loss, or a fault that erased the lock during the hold.
/// * Another error needs a fault (or its aftermath) during the unlock call, or an erasing fault.
/// * A hung unlock is always a problem.
///
/// Only this crate's sections ([`Party::Rust`]): Redisson's unlock results are reported, not judged.
pub fn check_unlocks(h: &History, rules: &Rules) -> Vec<UnlockProblem> {
    let mut out = Vec::new();
    for (i, s) in h.sections.iter().enumerate() {
        if s.party != Party::Rust {
            continue;
        }
        let erased = h
            .faults
            .iter()
            .enumerate()
            .filter(|(_, f)| f.erases(&s.lock) && f.start <= s.unlock_done && f.end >= s.acquire_start)
            .map(|(i, _)| i)
            .collect::<Vec<_>>();
        match &s.unlock {
            UnlockResult::Released => {}
            UnlockResult::Partial => out.push(UnlockProblem {
                section: i,
                what: "unlock after a single acquire returned Partial (the acquisition was counted twice in Redis)".into(),
                faults: h.faults_in(s.acquire_start, s.start, rules.aftermath_ns),
            }),
            UnlockResult::NotHeld => {
                if s.lost.is_none() && erased.is_empty() {
                    out.push(UnlockProblem {
                        section: i,
                        what: "unlock returned NotHeld but no loss was signalled and no fault erased the lock".into(),
                        faults: h.faults_in(s.acquire_start, s.unlock_done, rules.aftermath_ns),
                    });
                }
            }
            UnlockResult::Error { message } => {
                let around = h.faults_in(s.end, s.unlock_done, rules.aftermath_ns);
                if around.is_empty() && erased.is_empty() {
                    out.push(UnlockProblem {
                        section: i,
                        what: format!("unlock failed with `{message}` while no fault was active"),
                        faults: h.faults_in(s.acquire_start, s.unlock_done, rules.aftermath_ns),
                    });
                }
            }
            UnlockResult::Hung => out.push(UnlockProblem {
                section: i,
                what: "unlock did not return".into(),
                faults: h.faults_in(s.end, s.unlock_done, rules.aftermath_ns),
            }),
        }
    }
    out
}

/// A signalled loss that no fault explains.
#[derive(Clone, Debug)]
pub struct LossProblem {
    pub section: usize,
    /// Faults in the trust window before the loss was learned.
    pub faults: Vec<usize>,
}

impl LossProblem {
    pub fn describe(&self, h: &History) -> String {
        let s = &h.sections[self.section];
        format!(
            "hold lost although no fault erased `{}`: {}; faults in the {:.1} s before: {}",
            s.lock,
            h.describe_section(s),
            Rules::default().lookback_ns as f64 / 1e9,
            h.describe_faults(&self.faults)
        )
    }
}

/// (e) A hold is lost only when a fault erased its lock's data (restart, `FLUSHALL`, a key of
/// another type written over it). Stalls shorter than the lease (pauses, busy scripts, killed
/// connections) must not cost a hold (S3, F2, F7 in `docs/guarantees.md`, "Scenario ids in the
/// tests"), nor must another lock's key of another type in the same renewal batch (F30).
/// Only this crate's sections ([`Party::Rust`]).
pub fn check_losses(h: &History, rules: &Rules) -> Vec<LossProblem> {
    let mut out = Vec::new();
    for (i, s) in h.sections.iter().enumerate() {
        if s.party != Party::Rust {
            continue;
        }
        let Some(l) = &s.lost else { continue };
        let erased = h
            .faults
            .iter()
            .any(|f| f.erases(&s.lock) && f.start <= l.learned && f.end >= s.acquire_start);
        if !erased {
            out.push(LossProblem {
                section: i,
                faults: h.faults_in(l.learned.saturating_sub(rules.lookback_ns), l.learned, 0),
            });
        }
    }
    out
}

/// Counts for the report (of this crate's sections; `by_party` counts every section).
#[derive(Clone, Debug, Default)]
pub struct Summary {
    pub sections: usize,
    /// Sections per party, Java included.
    pub by_party: BTreeMap<String, usize>,
    pub by_unlock: BTreeMap<String, usize>,
    pub unlock_errors: BTreeMap<String, usize>,
    pub lost_by_reason: BTreeMap<String, usize>,
    pub by_method: BTreeMap<String, usize>,
    pub by_role: BTreeMap<String, usize>,
    pub by_lock: BTreeMap<String, usize>,
    pub attempts: BTreeMap<String, usize>,
    /// kind -> (count, total ns, injector errors)
    pub faults: BTreeMap<String, (usize, u64, usize)>,
    pub max_wait_ns: u64,
    pub max_wait_section: Option<usize>,
    pub p50_wait_ns: u64,
    pub p99_wait_ns: u64,
    /// From the first acquisition to the last unlock.
    pub span_ns: u64,
    pub per_second: f64,
    /// The worst `try_lock_for` return time beyond its wait (L3 in `docs/guarantees.md` bounds it by
    /// one command timeout).
    pub max_try_overrun_ns: u64,
    pub longest_cancelled_wait_ns: u64,
    /// Sections per phase.
    pub by_phase: BTreeMap<String, usize>,
}

/// (d) Summary counts.
pub fn summarize(h: &History) -> Summary {
    let mut s = Summary::default();
    let mut waits = Vec::with_capacity(h.sections.len());
    let (mut first, mut last) = (u64::MAX, 0u64);
    for (i, x) in h.sections.iter().enumerate() {
        *s.by_party.entry(x.party.label().to_owned()).or_default() += 1;
        if x.party != Party::Rust {
            continue;
        }
        s.sections += 1;
        *s.by_unlock.entry(x.unlock.label().to_owned()).or_default() += 1;
        if let UnlockResult::Error { message } = &x.unlock {
            *s.unlock_errors.entry(error_class(message)).or_default() += 1;
        }
        if let Some(l) = &x.lost {
            *s.lost_by_reason.entry(l.reason.clone()).or_default() += 1;
        }
        *s.by_method.entry(x.method.clone()).or_default() += 1;
        *s.by_role.entry(x.role.clone()).or_default() += 1;
        *s.by_lock.entry(x.lock.clone()).or_default() += 1;
        let phase = h
            .phase_at(x.start)
            .map(|p| p.name.clone())
            .unwrap_or_else(|| "-".into());
        *s.by_phase.entry(phase).or_default() += 1;
        let w = x.start.saturating_sub(x.acquire_start);
        waits.push(w);
        if w >= s.max_wait_ns {
            s.max_wait_ns = w;
            s.max_wait_section = Some(i);
        }
        first = first.min(x.acquire_start);
        last = last.max(x.unlock_done);
    }
    for a in &h.attempts {
        *s.attempts.entry(a.outcome.label()).or_default() += 1;
        first = first.min(a.start);
        last = last.max(a.end);
        if let (Some(w), "try_lock_for") = (a.wait_ms, a.method.as_str()) {
            let took = a.end.saturating_sub(a.start);
            s.max_try_overrun_ns = s.max_try_overrun_ns.max(took.saturating_sub(w * 1_000_000));
        }
        if a.outcome == AttemptResult::Cancelled {
            s.longest_cancelled_wait_ns = s.longest_cancelled_wait_ns.max(a.end - a.start);
        }
    }
    for f in &h.faults {
        let e = s.faults.entry(f.kind.clone()).or_default();
        e.0 += 1;
        e.1 += f.end.saturating_sub(f.start);
        e.2 += usize::from(f.error.is_some());
    }
    waits.sort_unstable();
    if !waits.is_empty() {
        s.p50_wait_ns = waits[waits.len() / 2];
        s.p99_wait_ns = waits[(waits.len() * 99 / 100).min(waits.len() - 1)];
    }
    if last > first {
        s.span_ns = last - first;
        s.per_second = s.sections as f64 / (s.span_ns as f64 / 1e9);
    }
    s
}

/// Hand-overs of a lock between the parties: consecutive sections of one lock (by start) held by
/// different parties, i.e. mutual exclusion between Java and Rust really was exercised.
#[derive(Clone, Debug, Default)]
pub struct Handoffs {
    /// (from, to) -> count
    pub count: BTreeMap<(Party, Party), usize>,
    /// (from, to) -> the shortest gap from one section's end to the next one's start (ns).
    pub min_gap_ns: BTreeMap<(Party, Party), u64>,
}

impl Handoffs {
    pub fn between(&self, from: Party, to: Party) -> usize {
        self.count.get(&(from, to)).copied().unwrap_or(0)
    }
}

pub fn handoffs(h: &History) -> Handoffs {
    let mut by_lock: BTreeMap<&str, Vec<&Section>> = BTreeMap::new();
    for s in &h.sections {
        by_lock.entry(s.lock.as_str()).or_default().push(s);
    }
    let mut out = Handoffs::default();
    for (_, mut v) in by_lock {
        v.sort_by_key(|s| (s.start, s.end));
        for w in v.windows(2) {
            let (x, y) = (w[0], w[1]);
            if x.party == y.party {
                continue;
            }
            let key = (x.party, y.party);
            *out.count.entry(key).or_default() += 1;
            let gap = y.start.saturating_sub(x.effective_end());
            let m = out.min_gap_ns.entry(key).or_insert(u64::MAX);
            *m = (*m).min(gap);
        }
    }
    out
}

/// Markdown tables of a summary.
pub fn summary_markdown(h: &History, s: &Summary) -> String {
    let mut o = String::new();
    let ms = |ns: u64| format!("{:.1} ms", ns as f64 / 1e6);
    let _ = writeln!(o, "### Sections\n");
    if s.by_party.keys().any(|k| k != Party::Rust.label()) {
        let _ = writeln!(
            o,
            "Every party's sections enter the overlap check; the figures below are this crate's (Rust) sections only.\n"
        );
        table(&mut o, "party", &s.by_party);
    }
    let _ = writeln!(
        o,
        "{} sections in {:.1} s ({:.0} per second); wait for the lock p50 {}, p99 {}, max {}{}.\n",
        s.sections,
        s.span_ns as f64 / 1e9,
        s.per_second,
        ms(s.p50_wait_ns),
        ms(s.p99_wait_ns),
        ms(s.max_wait_ns),
        s.max_wait_section
            .map(|i| format!(
                " ({} p{}/w{})",
                h.sections[i].lock, h.sections[i].process, h.sections[i].worker
            ))
            .unwrap_or_default(),
    );
    table(&mut o, "unlock outcome", &s.by_unlock);
    if !s.unlock_errors.is_empty() {
        table(&mut o, "unlock error", &s.unlock_errors);
    }
    if !s.lost_by_reason.is_empty() {
        table(&mut o, "loss signalled (reason)", &s.lost_by_reason);
    }
    table(&mut o, "phase", &s.by_phase);
    table(&mut o, "acquire method", &s.by_method);
    table(&mut o, "task role", &s.by_role);
    table(&mut o, "lock", &s.by_lock);
    let _ = writeln!(o, "### Acquisitions without a section\n");
    if s.attempts.is_empty() {
        let _ = writeln!(o, "none\n");
    } else {
        table(&mut o, "outcome", &s.attempts);
    }
    let _ = writeln!(
        o,
        "Worst `try_lock_for` return beyond its wait: {} (L3 allows one command timeout). Longest acquire cancelled at the end of the run: {}.\n",
        ms(s.max_try_overrun_ns),
        ms(s.longest_cancelled_wait_ns)
    );
    let _ = writeln!(o, "### Faults injected\n");
    let _ = writeln!(
        o,
        "| fault | count | total time | injector errors |\n|---|---:|---:|---:|"
    );
    for (k, (n, ns, e)) in &s.faults {
        let _ = writeln!(o, "| {k} | {n} | {} | {e} |", ms(*ns));
    }
    let _ = writeln!(o);
    o
}

fn table(o: &mut String, what: &str, m: &BTreeMap<String, usize>) {
    let _ = writeln!(o, "| {what} | count |\n|---|---:|");
    for (k, v) in m {
        let _ = writeln!(o, "| {k} | {v} |");
    }
    let _ = writeln!(o);
}
