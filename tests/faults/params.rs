//! The fault run's parameters: timings, lock and semaphore names, the run's mode (quick, full,
//! network, soak) and the workers' client configuration.

use super::*;

/// Watchdog timeout of the workers: short, so stalls of a second matter (renewal every 1 s,
/// trusted for 3 s minus one command timeout).
pub(super) const WATCHDOG: Duration = Duration::from_secs(3);
pub(super) const COMMAND_TIMEOUT: Duration = Duration::from_millis(500);
pub(super) const CONNECT_TIMEOUT: Duration = Duration::from_millis(500);
pub(super) const POLL_INTERVAL: Duration = Duration::from_millis(500);
/// The longest stall of Redis that no hold may pay for, wherever it falls: the trust window
/// (`WATCHDOG` less the margin, here one `COMMAND_TIMEOUT`) less one renewal period, since a
/// stall may begin just before a round and must end before the deadline the renewal before it
/// gave. Planned stalls are shorter, but a busy script counts rounds where the server freezes
/// TIME inside scripts (7.2+) and CPU load can stretch it past this: a loss after such a stall
/// is the promised signal (counted as explained), not a failure.
pub(super) const COVERED_STALL: Duration = WATCHDOG
    .saturating_sub(COMMAND_TIMEOUT)
    .saturating_sub(Duration::from_millis(WATCHDOG.as_millis() as u64 / 3));
/// Lease of `lock_with_lease`: generous next to a 0–3 ms hold.
pub(super) const LEASE: Duration = Duration::from_secs(5);
/// How long a key of another type stays over the victim lock: longer than the watchdog's trust
/// window, so a correct holder has learned of its loss before anyone else can take the lock.
pub(super) const POISON_TTL: Duration = Duration::from_millis(3_500);
pub(super) const VICTIM: &str = "fault:victim";
/// Faults that stall Redis or cut connections (SIGSTOP, CLIENT PAUSE, busy script, CLIENT KILL
/// normal) are at least this far apart: more than the watchdog timeout, so one trust window
/// (timeout minus a command timeout) sees at most one of them, and a correct watchdog that
/// retries every timeout/3 loses no hold to them.
pub(super) const DISRUPTION_SPACING: Duration = Duration::from_millis(3_200);
pub(super) const HOT_LOCKS: usize = 4;
pub(super) const LONG_LOCKS: usize = 2;
/// An acquisition that takes longer is recorded as `hung` and dropped (reported, not a failure:
/// nothing promises fairness, and the victim lock is held 4–6 s by each of several processes).
pub(super) const ACQUIRE_LIMIT: Duration = Duration::from_secs(90);
pub(super) const UNLOCK_LIMIT: Duration = Duration::from_secs(15);

/// Latches with a longer TTL than this are acquire-cancellation markers, not unlock latches
/// (whose TTL is the retry window: a few command timeouts).
pub(super) const LATCH_SHORT_MS: i64 = 30_000;
/// No latch or marker may live longer.
pub(super) const LATCH_LONG_MAX_MS: i64 = 15 * 60_000;
/// The `Semaphore` (Redisson's `RSemaphore`) of the semaphore tasks, and its permits (N).
pub(super) const SEM: &str = "fault:sem";
pub(super) const SEM_PERMITS: u32 = 2;
/// The `PermitExpirableSemaphore` of the semaphore tasks, and its permits (N).
pub(super) const XSEM: &str = "fault:xsem";
pub(super) const XSEM_PERMITS: u32 = 3;
/// The lease of an expirable permit: generous next to a 0–3 ms hold, and longer than the quick
/// run, so that a permit the client failed to give back does not come back by itself before a
/// check of the count sees it missing.
pub(super) const XSEM_LEASE: Duration = Duration::from_secs(120);
/// A semaphore acquisition that found no permits for this long is given up (it is settled in the
/// background), and the semaphore is set up again if missing: after data loss it is gone, and an
/// `acquire` would wait for ever.
pub(super) const SEM_PATIENCE: Duration = Duration::from_millis(1_500);
/// How often a semaphore task re-runs `try_set_permits(N)` (a no-op while the semaphore exists).
pub(super) const SEM_SETUP_EVERY: Duration = Duration::from_secs(1);
/// How long a worker may take to park its semaphore tasks and drain its background work.
pub(super) const PAUSE_LIMIT: Duration = Duration::from_secs(15);
pub(super) const WORKER_TEST: &str = "worker::worker_process";
pub(super) const ROLE_VAR: &str = "FAULTS_ROLE";

pub(super) fn hot_names() -> Vec<String> {
    (0..HOT_LOCKS).map(|i| format!("fault:hot:{i}")).collect()
}

pub(super) fn long_names() -> Vec<String> {
    (0..LONG_LOCKS).map(|i| format!("fault:long:{i}")).collect()
}

pub(super) fn renew_name(process: u32) -> String {
    format!("fault:renew:{process}")
}

/// The semaphores: name, kind, permits (N).
pub(super) fn semaphores() -> [(&'static str, SemKind, u32); 2] {
    [
        (SEM, SemKind::Semaphore, SEM_PERMITS),
        (XSEM, SemKind::Expirable, XSEM_PERMITS),
    ]
}

/// The sorted set of the expirable semaphore `name`'s leases (`{name}:timeout`).
pub(super) fn leases_key(name: &str) -> String {
    format!("{{{name}}}:timeout")
}

/// Every lock name any worker takes (not the semaphores: their counts live without a TTL).
pub(super) fn all_names(processes: usize) -> Vec<String> {
    let mut v = hot_names();
    v.extend(long_names());
    v.extend((0..processes as u32).map(renew_name));
    v.push(VICTIM.to_owned());
    v
}

#[derive(Clone, Debug)]
pub(super) struct Mode {
    pub(super) full: bool,
    /// The network run: every client (Rust and Java) goes through a toxiproxy, and phase A's
    /// faults are the network's (`NetFault`) instead of the server's.
    pub(super) net: bool,
    /// The soak (`FAULTS_SOAK_SECS`, `scripts/soak`): a network run whose phase A lasts this
    /// long, with the server's faults and the network's mixed, and memory watched.
    pub(super) soak: Option<Duration>,
    pub(super) processes: usize,
    pub(super) hot_tasks: usize,
    pub(super) long_tasks: usize,
    /// Semaphore tasks per worker process, of `SEM` and of `XSEM`.
    pub(super) sem_tasks: usize,
    pub(super) xsem_tasks: usize,
    pub(super) warmup: Duration,
    pub(super) phase_a: Duration,
    pub(super) phase_b: Duration,
    pub(super) min_sections: usize,
    /// Permit holdings per semaphore below which the run means too little.
    pub(super) min_sem_sections: usize,
    pub(super) seed: u64,
}

impl Mode {
    pub(super) fn from_env(net: bool) -> Mode {
        let full = std::env::var("FAULTS_FULL").is_ok_and(|v| v == "1");
        let seed = std::env::var("FAULTS_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| now_ns() % 1_000_000);
        let soak = std::env::var("FAULTS_SOAK_SECS")
            .ok()
            .and_then(|s| s.parse::<u64>().ok())
            .filter(|_| net)
            .map(Duration::from_secs);
        if let Some(d) = soak {
            return Mode {
                full: false,
                net,
                soak,
                processes: 3,
                hot_tasks: 6,
                long_tasks: 1,
                sem_tasks: 2,
                xsem_tasks: 2,
                warmup: Duration::from_secs(2),
                phase_a: d,
                phase_b: Duration::from_secs(12),
                min_sections: 50 * d.as_secs() as usize,
                min_sem_sections: 10 * d.as_secs() as usize,
                seed,
            };
        }
        if full {
            Mode {
                full,
                net,
                soak: None,
                processes: 4,
                hot_tasks: 8,
                long_tasks: 2,
                sem_tasks: 3,
                xsem_tasks: 2,
                warmup: Duration::from_secs(2),
                phase_a: Duration::from_secs(150),
                phase_b: Duration::from_secs(60),
                min_sections: 10_000,
                min_sem_sections: 2_000,
                seed,
            }
        } else {
            Mode {
                full,
                net,
                soak: None,
                processes: 3,
                hot_tasks: 6,
                long_tasks: 1,
                sem_tasks: 2,
                xsem_tasks: 2,
                warmup: Duration::from_millis(1_500),
                phase_a: Duration::from_secs(30),
                // the network run's phase B only checks that data loss behind a proxy is handled
                phase_b: Duration::from_secs(if net { 6 } else { 12 }),
                min_sections: 1_500,
                min_sem_sections: 300,
                seed,
            }
        }
    }
}

pub(super) fn config() -> Config {
    Config::default()
        .with_lock_watchdog_timeout(WATCHDOG)
        // a reconnect whose handshake stalls gives up well within a renewal period
        .with_connect_timeout(CONNECT_TIMEOUT)
        .with_command_timeout(COMMAND_TIMEOUT)
        .with_poll_interval(POLL_INTERVAL)
}
