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
//! * [`check_capacity`]: sections of a semaphore (permit holdings, `Section::sem` set) hold at
//!   most its permits at any instant; an excess is explained only by a fault that erased the
//!   semaphore between an earlier holder's acquisition and the later ones' (for a `Semaphore`,
//!   also by permits from before it given back into the count set up after it).
//!   [`check_reinits`]: a semaphore is created again only after such a fault.
//!   [`semaphore_figures`]: counts per semaphore, the most permits held at once.
//!
//! Sections come from this crate's workers ([`Party::Rust`]) and, when a JDK is present, from real
//! Redisson ([`Party::Java`], the JVM harness' `contend` command, timed with `System.nanoTime()`,
//! which is `CLOCK_MONOTONIC` on Linux HotSpot). Every section enters the overlap check; the
//! unlock and loss checkers judge this crate's sections only.
//!
//! Parts: `record` (the records of a history file), `files` (writing the files and loading them
//! into a [`History`]), `checks` (the checkers' rules), `semaphores` (the semaphore checkers and
//! figures), `summary` (counts, hand-overs, Markdown).
#![allow(dead_code)]

mod checks;
mod files;
mod record;
mod semaphores;
mod summary;

// The parts' items are this module's interface. Every test target compiles all of `common`, and
// most use none of the checkers, so a re-export may go unused there.
#[allow(unused_imports)]
pub use checks::*;
#[allow(unused_imports)]
pub use files::*;
#[allow(unused_imports)]
pub use record::*;
#[allow(unused_imports)]
pub use semaphores::*;
#[allow(unused_imports)]
pub use summary::*;

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
