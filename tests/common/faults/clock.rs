//! The [`ClockWatch`], which notices the machine's wall clock being stepped while a run goes on.
//!
//! Redis expires keys by the wall clock (a TTL is kept as an absolute Unix time in ms), while
//! the clients count leases on the monotonic clock. A step of the wall clock forward by `d`
//! takes `d` off every key's time to live at once: a key with less left is gone, locks of
//! healthy holders included. Nobody injects that here, but a machine may do it (a VM resumed,
//! a time daemon stepping instead of slewing), and the servers under test run on this machine's
//! clock. So the watch compares the two clocks every few ms and records every step as an
//! observed fault: one forward by at least `erasing` counts as erasing every lock (as a restart
//! without persistence does); smaller ones, and steps back, are only reported.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::super::history::{now_ns, FaultRecord};

/// A change of the wall clock's offset from the monotonic one smaller than this is drift or a
/// daemon's slewing (at most 0.5 ms per second), not a step.
const STEP: Duration = Duration::from_millis(100);
/// How often the clocks are compared.
const PERIOD: Duration = Duration::from_millis(5);
/// A comparison whose two monotonic readings, taken around the wall clock's, lie further apart
/// than this (the thread was preempted in between) is not used.
const READ_WINDOW_NS: u64 = 1_000_000;

/// Watches the wall clock against the monotonic one on a thread of its own (a busy runtime
/// does not delay it); [`stop`](ClockWatch::stop) returns the steps seen.
pub struct ClockWatch {
    thread: std::thread::JoinHandle<Vec<FaultRecord>>,
    stop: Arc<AtomicBool>,
}

/// The wall clock minus the monotonic one, in ns, and when it was read (monotonic ns); `None`
/// when the thread was preempted between the readings.
fn offset() -> Option<(i128, u64)> {
    let before = now_ns();
    let wall = SystemTime::now().duration_since(UNIX_EPOCH).ok()?.as_nanos() as i128;
    let after = now_ns();
    (after - before <= READ_WINDOW_NS).then(|| (wall - (before / 2 + after / 2) as i128, after))
}

impl ClockWatch {
    /// Starts watching; a step forward by at least `erasing` is recorded as erasing every lock.
    pub fn spawn(erasing: Duration) -> ClockWatch {
        let stop = Arc::new(AtomicBool::new(false));
        let stop2 = stop.clone();
        let thread = std::thread::spawn(move || {
            let mut steps = Vec::new();
            let mut last = None;
            while !stop2.load(Ordering::Relaxed) {
                std::thread::sleep(PERIOD);
                let Some((off, at)) = offset() else { continue };
                if let Some((prev_off, prev_at)) = last {
                    if let Some(step) = step_record(prev_off, prev_at, off, at, erasing) {
                        steps.push(step);
                    }
                }
                last = Some((off, at));
            }
            steps
        });
        ClockWatch { thread, stop }
    }

    /// Stops watching, returning the steps seen.
    pub fn stop(self) -> Vec<FaultRecord> {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.join().expect("the clock watch panicked")
    }
}

/// The record of a step between two readings of the offset, if the offset moved by `STEP` or
/// more.
pub fn step_record(
    prev_off: i128,
    prev_at: u64,
    off: i128,
    at: u64,
    erasing: Duration,
) -> Option<FaultRecord> {
    let delta = off - prev_off;
    if delta.unsigned_abs() < STEP.as_nanos() {
        return None;
    }
    let ms = delta as f64 / 1e6;
    let erases = delta >= erasing.as_nanos() as i128;
    Some(FaultRecord {
        kind: "clock-step".into(),
        detail: format!(
            "the machine's wall clock stepped {ms:+.0} ms (observed, not injected; Redis expires keys by it{})",
            if erases {
                ": every TTL shortened by that much"
            } else if delta > 0 {
                ": within the trust margin, counted as erasing nothing"
            } else {
                ": keys live longer"
            }
        ),
        data_loss: erases,
        target: None,
        severs: false,
        start: prev_at,
        end: at,
        error: None,
    })
}
