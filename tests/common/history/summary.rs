//! Counts for the report: outcomes, waits, throughput and faults of a history, the hand-overs of
//! locks between the parties, and their rendering as Markdown tables.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::{error_class, AttemptResult, History, Party, Section, UnlockResult};

/// Counts for the report (of this crate's lock sections; `by_party` counts every lock section;
/// semaphores have their own figures, `semaphore_figures`).
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
        if x.sem.is_some() {
            continue;
        }
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
    for a in h.attempts.iter().filter(|a| a.sem.is_none()) {
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
    for s in h.sections.iter().filter(|s| s.sem.is_none()) {
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
