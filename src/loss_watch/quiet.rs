//! How soon a held key may be read again after a read found its holds in place.
//!
//! An invalidation is only a hint: the watch reads the key and finds the field gone (a loss) or
//! in place (a false alarm: a renewal, a re-entry, another reader joining). One kind of false
//! alarm feeds itself: when the server's tracking table is full (`tracking-table-max-keys`
//! below the keys this client holds), every read inserts a key, which evicts another, whose
//! eviction is pushed as an invalidation, whose read evicts the next: a loop of reads as fast
//! as the connection goes (measured: ~50,000 `HEXISTS` a second for 500 holds and a table of 50).
//!
//! So a key reported again soon after a read found it in place gets a quiet time before it is
//! read again: an invalidation within it is read when it ends. A key's first read (a new hold's,
//! or a report after a calm) sets no quiet, so a loss right after it is read at once: only a
//! key reported again within [`FIRST`] of such a read is a loop in the making. Its quiet starts
//! at [`FIRST`] and doubles each time the key is reported again before twice its quiet has
//! passed, up to a ceiling (the renewal period: a loss is then noticed no later than renewal
//! notices it). A key left alone for longer than that has no quiet again. The reads of a key
//! that keeps being reported stay at one per ceiling at most.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The quiet of a key reported again this soon after a read found it in place.
const FIRST: Duration = Duration::from_millis(100);

/// Per key, its last read that found it in place and its quiet.
pub(super) struct Quiet {
    keys: HashMap<Arc<str>, Entry>,
    ceiling: Duration,
    warned: bool,
    /// The last [`tidy`](Self::tidy).
    tidied: Instant,
    /// The first read since then, if any.
    read_since: Option<Instant>,
}

struct Entry {
    read: Instant,
    quiet: Duration,
}

impl Quiet {
    /// Quiet times up to `ceiling` (at least [`FIRST`]).
    pub(super) fn new(ceiling: Duration) -> Quiet {
        Quiet {
            keys: HashMap::new(),
            ceiling: ceiling.max(FIRST),
            warned: false,
            tidied: Instant::now(),
            read_since: None,
        }
    }

    /// When [`tidy`](Self::tidy) has something to forget: twice [`FIRST`] after the first read
    /// since the last one (every key read in that burst after a calm is forgettable by then),
    /// else a ceiling after the last one while keys in their quiet are left; `None` while
    /// nothing is kept.
    pub(super) fn tidy_due(&self) -> Option<Instant> {
        match self.read_since {
            Some(read) => Some(read + FIRST * 2),
            None if !self.keys.is_empty() => Some(self.tidied + self.ceiling),
            None => None,
        }
    }

    /// When `key` may be read, if not now.
    pub(super) fn due(&self, key: &str, now: Instant) -> Option<Instant> {
        let e = self.keys.get(key)?;
        let at = e.read + e.quiet;
        (now < at).then_some(at)
    }

    /// A read at `now` found `key`'s holds in place.
    pub(super) fn in_place(&mut self, key: &Arc<str>, now: Instant) {
        self.read_since.get_or_insert(now);
        let ceiling = self.ceiling;
        let Some(e) = self.keys.get_mut(key) else {
            // a first read: no quiet
            self.keys.insert(
                key.clone(),
                Entry {
                    read: now,
                    quiet: Duration::ZERO,
                },
            );
            return;
        };
        e.quiet = if now >= e.read + (e.quiet * 2).max(FIRST) {
            Duration::ZERO // after a calm: as a first read
        } else if e.quiet == Duration::ZERO {
            FIRST
        } else {
            (e.quiet * 2).min(ceiling)
        };
        e.read = now;
        if e.quiet == ceiling && !self.warned {
            self.warned = true;
            tracing::warn!(key = %key, every = ?ceiling,
                "a held key keeps being reported changed while its hold is in place: its reads are spaced out to one per {ceiling:?} (the server's tracking table may be smaller than the keys this client holds: see tracking-table-max-keys); a loss of it is then noticed within that time");
        }
    }

    /// `key` has no hold any more, or was found gone: forget it.
    pub(super) fn forget(&mut self, key: &str) {
        self.keys.remove(key);
    }

    /// Drops every entry that now says no more than a missing one would: its key was last read
    /// after a calm more than [`FIRST`] ago, or its quiet and as long again have passed (then
    /// [`due`](Self::due) finds no quiet, and a report is taken as a first read, as for a key
    /// never read). The map gives back what it no longer needs: with tracking on the pub/sub
    /// connection every renewal is reported, so each held key is read once a renewal period
    /// and would otherwise keep a slot between rounds ([`tidy_due`](Self::tidy_due) says when).
    pub(super) fn tidy(&mut self, now: Instant) {
        self.keys.retain(|_, e| now < e.read + (e.quiet * 2).max(FIRST));
        if self.keys.capacity() > 4 * self.keys.len().max(16) {
            self.keys.shrink_to_fit();
        }
        self.tidied = now;
        self.read_since = None;
    }

    /// Keys with a quiet time.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.keys.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_quiet_starts_at_a_second_report_doubles_while_they_come_soon_and_ends_after_a_calm() {
        let ceiling = Duration::from_secs(1);
        let mut q = Quiet::new(ceiling);
        let k: Arc<str> = Arc::from("k");
        let t0 = Instant::now();
        assert_eq!(q.due("k", t0), None, "an unknown key is read at once");
        q.in_place(&k, t0);
        assert_eq!(q.due("k", t0), None, "a first read sets no quiet");
        // reported again soon: a quiet
        let t1 = t0 + FIRST / 2;
        q.in_place(&k, t1);
        assert_eq!(q.due("k", t1), Some(t1 + FIRST));
        // reported again at once, read when its quiet ends: the quiet doubles, up to the ceiling
        let mut t = t1;
        let mut quiet = FIRST;
        for _ in 0..10 {
            t += quiet;
            q.in_place(&k, t);
            quiet = (quiet * 2).min(ceiling);
            assert_eq!(q.due("k", t), Some(t + quiet));
        }
        assert_eq!(quiet, ceiling);
        // left alone for longer than twice its quiet: no quiet again, and a quiet after
        t += ceiling * 3;
        assert_eq!(q.due("k", t), None);
        q.in_place(&k, t);
        assert_eq!(q.due("k", t), None);
        q.in_place(&k, t + FIRST / 2);
        assert_eq!(q.due("k", t + FIRST / 2), Some(t + FIRST / 2 + FIRST));
        // a report now and then (a renewal's echo every period) never waits
        t += ceiling * 3;
        for _ in 0..3 {
            t += FIRST * 3;
            q.in_place(&k, t);
            assert_eq!(q.due("k", t), None);
        }
        q.forget("k");
        assert_eq!(q.due("k", t), None);
        q.in_place(&k, t);
        q.tidy(t + ceiling * 2);
        assert_eq!(q.len(), 0, "tidied");
    }

    /// What `tidy` drops changes nothing `due` and `in_place` decide, and the memory of a burst
    /// of reads (every held key's renewal reported at once) is given back before the next one.
    #[test]
    fn tidy_forgets_only_what_a_missing_entry_would_say_and_gives_the_memory_back() {
        let ceiling = Duration::from_secs(1);
        let t0 = Instant::now();
        // one key in a quiet (reported again soon), 1000 read once after a calm
        let mut q = Quiet::new(ceiling);
        let looping: Arc<str> = Arc::from("looping");
        q.in_place(&looping, t0);
        q.in_place(&looping, t0 + FIRST / 2);
        let keys: Vec<Arc<str>> = (0..1000).map(|i| Arc::from(format!("k{i}"))).collect();
        for k in &keys {
            q.in_place(k, t0);
        }
        let full = q.keys.capacity();
        assert_eq!(q.tidy_due(), Some(t0 + FIRST * 2), "after the burst of reads");
        // within FIRST of their read, a report of them is a second one: kept
        q.tidy(t0 + FIRST / 2);
        assert_eq!(q.len(), 1001);
        // after it, a report is taken as a first read with or without the entry: dropped, and
        // the map shrinks; the key in its quiet stays until its quiet and as long again passed
        let t = t0 + FIRST;
        q.tidy(t);
        assert_eq!(q.len(), 1, "only the key in its quiet is kept");
        assert_eq!(q.tidy_due(), Some(t + ceiling), "what is left, a ceiling later");
        assert!(
            q.keys.capacity() < full / 8,
            "capacity {} of {full}",
            q.keys.capacity()
        );
        assert_eq!(q.due("looping", t), Some(t0 + FIRST / 2 + FIRST));
        let mut fresh = Quiet::new(ceiling);
        for k in &keys[..3] {
            // reported again now and soon after: the same quiet as a key never read before
            let soon = t + FIRST / 2;
            for at in [t, soon] {
                q.in_place(k, at);
                fresh.in_place(k, at);
            }
            assert_eq!(q.due(k, soon), Some(soon + FIRST));
            assert_eq!(q.due(k, soon), fresh.due(k, soon), "as a key never read");
        }
        q.tidy(t0 + FIRST / 2 + FIRST * 2);
        assert_eq!(q.due("looping", t0 + FIRST / 2 + FIRST * 2), None);
        assert_eq!(
            q.keys.get("looping").map(|e| e.quiet),
            None,
            "its quiet and as long again passed"
        );
    }
}
