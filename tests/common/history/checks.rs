//! The checkers' rules: which overlaps of two sections are explained, which unlock results and
//! which losses a fault must account for.

use std::collections::BTreeMap;

use super::{History, Party, Section, UnlockResult};

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

/// (a) Every pair of overlapping sections of one lock, with its explanation if any. Sections of
/// a semaphore may overlap up to its capacity: `check_capacity` judges them, not this.
///
/// A section ends at its end, or when its holder learned of a loss. An overlap is explained
/// when one of the two holds lost its hold (loss signalled or unlock `NotHeld`) and a fault
/// that erased that lock's data happened after that hold's acquisition began and before the
/// other section began.
pub fn check_overlaps(h: &History) -> Vec<Overlap> {
    let mut by_lock: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, s) in h.sections.iter().enumerate() {
        if s.sem.is_none() {
            by_lock.entry(s.lock.as_str()).or_default().push(i);
        }
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
    /// For `NotHeld`: a fault that cut the client off the server within a watchdog timeout
    /// before the release, so the hold could run out before the release got through (the
    /// promised outcome, counted apart; not a failure).
    pub severed: Option<usize>,
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
/// * A dropped semaphore guard (its permits given back in the background) is no problem here:
///   a permit it failed to give back shows in the semaphore's count at a quiescent point.
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
            UnlockResult::Released | UnlockResult::Dropped => {}
            UnlockResult::Partial => out.push(UnlockProblem {
                section: i,
                what: "unlock after a single acquire returned Partial (the acquisition was counted twice in Redis)".into(),
                faults: h.faults_in(s.acquire_start, s.start, rules.aftermath_ns),
                severed: None,
            }),
            UnlockResult::NotHeld => {
                if s.lost.is_none() && erased.is_empty() {
                    let from = s.end.saturating_sub(rules.lookback_ns);
                    out.push(UnlockProblem {
                        section: i,
                        what: "unlock returned NotHeld but no loss was signalled and no fault erased the lock".into(),
                        faults: h.faults_in(s.acquire_start, s.unlock_done, rules.aftermath_ns),
                        severed: h.faults.iter().position(|f| f.severed_within(from, s.unlock_done)),
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
                        severed: None,
                    });
                }
            }
            UnlockResult::Hung => out.push(UnlockProblem {
                section: i,
                what: "unlock did not return".into(),
                faults: h.faults_in(s.end, s.unlock_done, rules.aftermath_ns),
                severed: None,
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
    /// A fault in that window that cut the client off the server (a network stall or outage):
    /// renewals could not get through, and a signalled loss is the promised outcome (counted
    /// apart; not a failure).
    pub severed: Option<usize>,
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
/// another type written over it), or when a network fault cut the client off the server within
/// the trust window, or a stall longer than the watchdog covers (`LossProblem::severed`:
/// counted apart). Shorter stalls (pauses, busy scripts, killed connections) must not cost a hold (S3, F2, F7 in `docs/guarantees.md`, "Scenario ids in the
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
            let from = l.learned.saturating_sub(rules.lookback_ns);
            out.push(LossProblem {
                section: i,
                faults: h.faults_in(from, l.learned, 0),
                severed: h.faults.iter().position(|f| f.severed_within(from, l.learned)),
            });
        }
    }
    out
}
