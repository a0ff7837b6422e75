//! The semaphore checkers: at no instant are more permits of a semaphore held than it has
//! ([`check_capacity`]), a semaphore is created again only after data loss erased it
//! ([`check_reinits`]), and figures per semaphore for the report ([`semaphore_figures`]).
//!
//! A permit holding is a [`Section`] with `sem` set: it starts when the acquire call returned
//! (the grant happened earlier) and ends when the holder called release or dropped its guard (the
//! give-back happens later), so permits that the history shows held at once really were.
//!
//! What data loss does to a semaphore (a `FLUSHALL` or a restart without persistence erases its
//! count; the workers set it up again with `try_set_permits(N)`, a no-op while it exists):
//! * A holder that took its permit before the loss still works after it, while the permits of
//!   the new count are taken by others: one holder from before the loss may be one too many.
//! * `Semaphore` only: a release creates the count when it is missing and adds to the new count
//!   otherwise, so a permit taken before the loss and given back after it (also by a retry whose
//!   request latch the loss erased, or by the background give-back of an attempt whose reply was
//!   lost) counts once more, for as long as the semaphore lives. The expirable semaphore refuses
//!   the release of an id the loss erased. A background give-back queued before an [`Idle`]
//!   marker of its process that ended before the loss had applied before it: it counts no more.
//!
//! A quiescent check by the parent ([`Quiesce`](super::Quiesce)) leaves the semaphore at exactly
//! its capacity with nobody holding or acquiring: data loss before it explains nothing after it.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::{AttemptResult, History, Idle, Section, SemKind};

/// More permits of one semaphore held at once than it has.
#[derive(Clone, Debug)]
pub struct Excess {
    pub lock: String,
    pub kind: SemKind,
    pub capacity: u32,
    /// Indices into `History::sections`: the holdings open when it began, by start; the last one
    /// began it.
    pub open: Vec<usize>,
    /// Permits those held.
    pub held: u32,
    pub from: u64,
    /// When the permits held fell back to the capacity.
    pub to: u64,
    /// The data-loss fault that explains it, if any.
    pub explained_by: Option<usize>,
    /// Of `held`: permits whose holders may have taken them before the latest data-loss fault
    /// (their acquire call began before it ended).
    pub older: u32,
    /// Of `held`: permits taken after that fault (from the count set up after it).
    pub fresh: u32,
    /// `Semaphore` only: permits taken before that fault and given back (or being given back)
    /// after it began, each of which may have raised the new count by one.
    pub stale: u32,
    /// Phase containing the excess's start.
    pub phase: String,
    /// Whether that phase injects data-loss faults.
    pub data_loss_phase: bool,
    /// Faults active during the holdings.
    pub active: Vec<usize>,
}

impl Excess {
    pub fn describe(&self, h: &History) -> String {
        let mut o = format!(
            "semaphore `{}` ({}, {} permits): {} permits held at once for {:.3} ms from {} (phase {}):",
            self.lock,
            self.kind.label(),
            self.capacity,
            self.held,
            self.to.saturating_sub(self.from) as f64 / 1e6,
            h.at(self.from),
            self.phase,
        );
        for &i in &self.open {
            let _ = write!(o, "\n      {}", h.describe_section(&h.sections[i]));
        }
        let _ = write!(
            o,
            "\n      {}; faults during the holdings: {}",
            match self.explained_by {
                Some(f) => format!(
                    "explained by {} ({} permits held from before it, {} taken after it, {} given back into the new count from before it)",
                    h.describe_fault(f),
                    self.older,
                    self.fresh,
                    self.stale
                ),
                None => format!(
                    "UNEXPLAINED ({} permits held from before the latest data-loss fault, {} taken after it, {} given back into the new count from before it)",
                    self.older, self.fresh, self.stale
                ),
            },
            h.describe_faults(&self.active)
        );
        o
    }
}

/// The semaphore sections of `h`, by semaphore, with the semaphore's kind and capacity (the
/// smallest capacity its sections name: they should all agree).
fn by_semaphore(h: &History) -> BTreeMap<&str, (SemKind, u32, Vec<usize>)> {
    let mut out: BTreeMap<&str, (SemKind, u32, Vec<usize>)> = BTreeMap::new();
    for (i, s) in h.sections.iter().enumerate() {
        let Some(sem) = s.sem else { continue };
        let e = out
            .entry(s.lock.as_str())
            .or_insert((sem.kind, sem.capacity, Vec::new()));
        e.1 = e.1.min(sem.capacity);
        e.2.push(i);
    }
    out
}

/// Sweeps every semaphore's holdings in time order: the excesses ([`check_capacity`]; explained
/// only with `explain`) and, per semaphore, the most permits held at once and when
/// ([`max_held`]).
fn sweep(h: &History, explain: bool) -> (Vec<Excess>, BTreeMap<String, (u32, u64)>) {
    let mut out: Vec<Excess> = Vec::new();
    let mut peaks = BTreeMap::new();
    for (lock, (kind, cap, idx)) in by_semaphore(h) {
        let mut memo = BTreeMap::new();
        // (time, 0 = end / 1 = start, section): at one instant ends come first, so a holding
        // that begins when another ends does not overlap it
        let mut ev: Vec<(u64, u8, usize)> = Vec::with_capacity(idx.len() * 2);
        for &i in &idx {
            let s = &h.sections[i];
            if s.effective_end() > s.start {
                ev.push((s.start, 1, i));
                ev.push((s.effective_end(), 0, i));
            }
        }
        ev.sort_unstable();
        let mut open: Vec<usize> = Vec::new();
        let mut held = 0u32;
        let mut peak = (0u32, 0u64);
        let mut active: Vec<usize> = Vec::new();
        for (t, what, i) in ev {
            let p = h.sections[i].permits();
            if what == 0 {
                open.retain(|&j| j != i);
                held -= p;
                if held <= cap {
                    for a in active.drain(..) {
                        out[a].to = t;
                    }
                }
                continue;
            }
            open.push(i);
            held += p;
            if held > peak.0 {
                peak = (held, t);
            }
            if held > cap {
                active.push(out.len());
                out.push(excess(h, lock, kind, cap, &open, held, t, explain, &mut memo));
            }
        }
        peaks.insert(lock.to_owned(), peak);
    }
    (out, peaks)
}

/// (s) Every instant at which a semaphore's sections held more permits than it has (one entry
/// per holding that began while too many were held), with its explanation if any.
///
/// An excess at `t` is explained by the latest fault that erased the semaphore and began by `t`
/// (`L`), unless a quiescent check of the semaphore lies between them, when the permits taken
/// after `L` (holdings whose acquire call began after `L` ended) fit into the capacity plus, for
/// a `Semaphore`, the permits given back into the new count from before `L` (see the module
/// doc): the excess is then made of holders from before the loss.
pub fn check_capacity(h: &History) -> Vec<Excess> {
    sweep(h, true).0
}

/// The most permits held at once per semaphore, and when that was first reached.
pub fn max_held(h: &History) -> BTreeMap<String, (u32, u64)> {
    sweep(h, false).1
}

/// Whether a give-back that `process` queued at `queued` had certainly applied before `by`: an
/// [`Idle`] marker of that process begins after `queued` and ends by `by`.
fn given_back_before(idles: &[Idle], process: u32, queued: u64, by: u64) -> bool {
    let at = idles.partition_point(|i| (i.process, i.from) < (process, queued));
    idles.get(at).is_some_and(|i| i.process == process && i.to <= by)
}

/// Permits that may have been given back into the count set up after the fault `l` from before
/// it (a `Semaphore`'s holdings and abandoned acquisitions from `since` on), as the times from
/// which they count (holdings from their release call, attempts from their start), sorted, and
/// the running sums of their permits.
fn stale_candidates(h: &History, lock: &str, l: &super::FaultRecord, since: u64) -> (Vec<u64>, Vec<u32>) {
    let mut v: Vec<(u64, u32)> = Vec::new();
    for s in &h.sections {
        if s.lock == lock
            && s.sem.is_some()
            && s.acquire_start >= since
            && s.acquire_start <= l.end
            && (s.unlock_done >= l.start
                || (s.release_in_background()
                    && !given_back_before(&h.idles, s.process, s.unlock_done, l.start)))
        {
            v.push((s.end, s.permits()));
        }
    }
    // an attempt the worker gave up on (or that failed) may have been granted, and is then given
    // back in the background
    for a in &h.attempts {
        if a.lock == lock
            && a.outcome != AttemptResult::NotAcquired
            && a.start >= since
            && a.start <= l.end
            && (a.end >= l.start || !given_back_before(&h.idles, a.process, a.end, l.start))
        {
            v.push((a.start, a.sem.map_or(0, |s| s.permits)));
        }
    }
    v.sort_unstable();
    let mut sums = Vec::with_capacity(v.len() + 1);
    sums.push(0u32);
    for (_, p) in &v {
        sums.push(sums.last().copied().unwrap_or(0) + p);
    }
    (v.into_iter().map(|(t, _)| t).collect(), sums)
}

#[allow(clippy::too_many_arguments)]
fn excess(
    h: &History,
    lock: &str,
    kind: SemKind,
    cap: u32,
    open: &[usize],
    held: u32,
    t: u64,
    explain: bool,
    memo: &mut BTreeMap<usize, (Vec<u64>, Vec<u32>)>,
) -> Excess {
    let mut open = open.to_vec();
    open.sort_by_key(|&i| (h.sections[i].start, i));
    let first = open
        .iter()
        .map(|&i| h.sections[i].acquire_start)
        .min()
        .unwrap_or(t);
    let last = open.iter().map(|&i| h.sections[i].end).max().unwrap_or(t);
    let phase = h.phase_at(t);
    let mut e = Excess {
        lock: lock.to_owned(),
        kind,
        capacity: cap,
        open,
        held,
        from: t,
        to: t,
        explained_by: None,
        older: 0,
        fresh: held,
        stale: 0,
        phase: phase.map(|p| p.name.clone()).unwrap_or_else(|| "-".into()),
        data_loss_phase: phase.is_some_and(|p| p.data_loss),
        active: if explain {
            h.faults_in(first, last, 0)
        } else {
            Vec::new()
        },
    };
    if !explain {
        return e;
    }
    // the latest fault that erased the semaphore and began by t
    let Some(li) = h
        .faults
        .iter()
        .enumerate()
        .filter(|(_, f)| f.erases(lock) && f.start <= t)
        .max_by_key(|(_, f)| f.start)
        .map(|(i, _)| i)
    else {
        return e;
    };
    let l = &h.faults[li];
    // a quiescent check after it: nothing from before it is left
    if h.quiesces
        .iter()
        .any(|q| q.lock == lock && q.start >= l.end && q.end <= t)
    {
        return e;
    }
    e.older = e
        .open
        .iter()
        .map(|&i| &h.sections[i])
        .filter(|s| s.acquire_start <= l.end)
        .map(Section::permits)
        .sum();
    e.fresh = held - e.older;
    if kind.counts_stale_releases() {
        let (keys, sums) = memo.entry(li).or_insert_with(|| {
            // records from before the latest quiescent check before L were drained by it
            let since = h
                .quiesces
                .iter()
                .filter(|q| q.lock == lock && q.end <= l.start)
                .map(|q| q.start)
                .max()
                .unwrap_or(0);
            stale_candidates(h, lock, l, since)
        });
        // holdings still open at t are not among them (they end after t)
        e.stale = sums[keys.partition_point(|&k| k <= t)];
    }
    if e.fresh <= cap + e.stale {
        e.explained_by = Some(li);
    }
    e
}

/// Two creations of a semaphore with no data loss between them.
#[derive(Clone, Debug)]
pub struct ReinitProblem {
    pub lock: String,
    /// Indices into `History::reinits`.
    pub first: usize,
    pub second: usize,
}

impl ReinitProblem {
    pub fn describe(&self, h: &History) -> String {
        let (a, b) = (&h.reinits[self.first], &h.reinits[self.second]);
        format!(
            "semaphore `{}` was created by {} at {} and again by {} at {} (`try_set_permits` returned true) with no data-loss fault between: its count vanished without data loss, or a set-up applied twice; faults between: {}",
            self.lock,
            a.by,
            h.at(a.start),
            b.by,
            h.at(b.start),
            h.describe_faults(&h.faults_in(a.start, b.end, 0))
        )
    }
}

/// (s) A semaphore is created (`try_set_permits` finds no count and sets one) once, and again
/// only after a fault erased it: between two creations lies such a fault.
pub fn check_reinits(h: &History) -> Vec<ReinitProblem> {
    let mut by_lock: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, r) in h.reinits.iter().enumerate() {
        by_lock.entry(r.lock.as_str()).or_default().push(i);
    }
    let mut out = Vec::new();
    for (lock, mut idx) in by_lock {
        idx.sort_by_key(|&i| h.reinits[i].start);
        for w in idx.windows(2) {
            let (a, b) = (&h.reinits[w[0]], &h.reinits[w[1]]);
            let erased = h
                .faults
                .iter()
                .any(|f| f.erases(lock) && f.end >= a.start && f.start <= b.end);
            if !erased {
                out.push(ReinitProblem {
                    lock: lock.to_owned(),
                    first: w[0],
                    second: w[1],
                });
            }
        }
    }
    out
}

/// Figures of one semaphore for the report.
#[derive(Clone, Debug, Default)]
pub struct SemFigures {
    pub kind: Option<SemKind>,
    pub capacity: u32,
    /// Permit holdings (sections).
    pub sections: usize,
    /// Permits taken, over every holding.
    pub permits: u64,
    /// The most permits held at once, and when first.
    pub max_held: u32,
    pub max_held_at: u64,
    /// Instants at which exactly the capacity was held (a holding began with all permits taken).
    pub full: usize,
    pub by_method: BTreeMap<String, usize>,
    /// Holdings by permits taken at once.
    pub by_permits: BTreeMap<String, usize>,
    pub by_release: BTreeMap<String, usize>,
    pub release_errors: BTreeMap<String, usize>,
    pub by_phase: BTreeMap<String, usize>,
    /// Acquisitions without a holding, by outcome.
    pub attempts: BTreeMap<String, usize>,
    pub p50_wait_ns: u64,
    pub p99_wait_ns: u64,
    pub max_wait_ns: u64,
    /// Creations by a worker's `try_set_permits` (after data loss); the parent's set-up is not
    /// counted.
    pub recreated: usize,
    /// Excesses outside explained data loss, and explained ones.
    pub excess_bad: usize,
    pub excess_explained: usize,
}

/// Figures per semaphore. `excesses`: what [`check_capacity`] found, to count; an excess is
/// explained when it has an explanation and lies in a data-loss phase.
pub fn semaphore_figures(h: &History, excesses: &[Excess]) -> BTreeMap<String, SemFigures> {
    let mut out: BTreeMap<String, SemFigures> = BTreeMap::new();
    let mut waits: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    for s in &h.sections {
        let Some(sem) = s.sem else { continue };
        let f = out.entry(s.lock.clone()).or_default();
        f.kind = Some(sem.kind);
        f.capacity = if f.sections == 0 {
            sem.capacity
        } else {
            f.capacity.min(sem.capacity)
        };
        f.sections += 1;
        f.permits += u64::from(sem.permits);
        *f.by_method.entry(s.method.clone()).or_default() += 1;
        *f.by_permits.entry(sem.permits.to_string()).or_default() += 1;
        *f.by_release.entry(s.unlock.label().to_owned()).or_default() += 1;
        if let super::UnlockResult::Error { message } = &s.unlock {
            *f.release_errors.entry(super::error_class(message)).or_default() += 1;
        }
        let phase = h
            .phase_at(s.start)
            .map(|p| p.name.clone())
            .unwrap_or_else(|| "-".into());
        *f.by_phase.entry(phase).or_default() += 1;
        waits
            .entry(s.lock.clone())
            .or_default()
            .push(s.start.saturating_sub(s.acquire_start));
    }
    for a in &h.attempts {
        if a.sem.is_none() {
            continue;
        }
        let f = out.entry(a.lock.clone()).or_default();
        *f.attempts.entry(a.outcome.label()).or_default() += 1;
    }
    for (lock, (n, at)) in max_held(h) {
        let f = out.entry(lock).or_default();
        f.max_held = n;
        f.max_held_at = at;
    }
    // holdings that began with every permit taken
    for (lock, (_, cap, idx)) in by_semaphore(h) {
        let f = out.entry(lock.to_owned()).or_default();
        let mut ev: Vec<(u64, u8, u32)> = Vec::new();
        for &i in &idx {
            let s = &h.sections[i];
            if s.effective_end() > s.start {
                ev.push((s.start, 1, s.permits()));
                ev.push((s.effective_end(), 0, s.permits()));
            }
        }
        ev.sort_unstable();
        let mut held = 0u32;
        for (_, what, p) in ev {
            if what == 0 {
                held -= p;
            } else {
                held += p;
                f.full += usize::from(held == cap);
            }
        }
    }
    for r in &h.reinits {
        if r.by != "parent" {
            out.entry(r.lock.clone()).or_default().recreated += 1;
        }
    }
    for e in excesses {
        let f = out.entry(e.lock.clone()).or_default();
        if e.data_loss_phase && e.explained_by.is_some() {
            f.excess_explained += 1;
        } else {
            f.excess_bad += 1;
        }
    }
    for (lock, mut w) in waits {
        w.sort_unstable();
        let f = out.entry(lock).or_default();
        if !w.is_empty() {
            f.p50_wait_ns = w[w.len() / 2];
            f.p99_wait_ns = w[(w.len() * 99 / 100).min(w.len() - 1)];
            f.max_wait_ns = w[w.len() - 1];
        }
    }
    out
}

/// Markdown tables of the semaphores' figures.
pub fn semaphore_markdown(h: &History, figs: &BTreeMap<String, SemFigures>) -> String {
    let mut o = String::new();
    let ms = |ns: u64| format!("{:.1} ms", ns as f64 / 1e6);
    let _ = writeln!(
        o,
        "| semaphore | kind | permits (N) | holdings | permits taken | most held at once | holdings that took the last permit | excesses failing the run | excesses explained by data loss | re-created after data loss | wait p50 / p99 / max |\n|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|"
    );
    for (lock, f) in figs {
        let _ = writeln!(
            o,
            "| `{lock}` | {} | {} | {} | {} | {}{} | {} | {} | {} | {} | {} / {} / {} |",
            f.kind.map(SemKind::label).unwrap_or("-"),
            f.capacity,
            f.sections,
            f.permits,
            f.max_held,
            if f.max_held > 0 {
                format!(" (first at {})", h.at(f.max_held_at))
            } else {
                String::new()
            },
            f.full,
            f.excess_bad,
            f.excess_explained,
            f.recreated,
            ms(f.p50_wait_ns),
            ms(f.p99_wait_ns),
            ms(f.max_wait_ns),
        );
    }
    let _ = writeln!(o);
    for (lock, f) in figs {
        let _ = writeln!(o, "`{lock}`:\n");
        let mut rows: Vec<(String, usize)> = Vec::new();
        let groups: [(&str, &BTreeMap<String, usize>); 6] = [
            ("acquire method", &f.by_method),
            ("permits per holding", &f.by_permits),
            ("release outcome", &f.by_release),
            ("release error", &f.release_errors),
            ("phase", &f.by_phase),
            ("acquisition without a holding", &f.attempts),
        ];
        let _ = writeln!(o, "| what | value | count |\n|---|---|---:|");
        for (what, m) in groups {
            for (k, v) in m {
                rows.push((format!("{what} | {k}"), *v));
            }
        }
        for (k, v) in rows {
            let _ = writeln!(o, "| {k} | {v} |");
        }
        let _ = writeln!(o);
    }
    o
}
